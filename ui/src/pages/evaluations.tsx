/** Evaluations (`GET /v1/evaluations?namespace=*`), each with why its placements failed, if they did. */
import { useState } from "preact/hooks";
import { qs } from "../api.js";
import { useBlocking } from "../blocking.js";
import { Loaded, Page } from "../components.js";
import type { Evaluation } from "../types.js";
import { EvalTable } from "./shared.js";

export function EvaluationsPage() {
  const evals = useBlocking<Evaluation[]>(`/v1/evaluations${qs({ namespace: "*" })}`);
  const [onlyFailed, setOnlyFailed] = useState(false);
  return (
    <Page
      title="Evaluations"
      sub={
        <label class="inline">
          <input
            type="checkbox"
            checked={onlyFailed}
            onChange={(e) => setOnlyFailed(e.currentTarget.checked)}
          />{" "}
          only those with placement failures
        </label>
      }
    >
      <Loaded
        live={evals}
        render={(list) => (
          <EvalTable
            label="Evaluations"
            showJob
            evals={onlyFailed ? list.filter((e) => Object.keys(e.FailedTGAllocs ?? {}).length > 0) : list}
          />
        )}
      />
    </Page>
  );
}
