/**
 * The controls of a paged list (blocking.ts usePagedList): a filter expression in Nomad's syntax,
 * applied by the server when submitted (Enter or "Filter"), and Previous / Next with the page
 * number. The filter's errors are the server's (a 400 "failed to read filter expression: …"),
 * shown by the page as any other.
 */
import { useState } from "preact/hooks";
import type { PagedList } from "./blocking.js";

export function PagerControls<T>(props: { list: PagedList<T>; label: string; example: string }) {
  const { list } = props;
  const [draft, setDraft] = useState(list.filter);
  return (
    <div class="pager" aria-label={`${props.label} paging`}>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          list.setFilter(draft.trim());
        }}
      >
        <input
          type="search"
          aria-label={`${props.label} filter`}
          placeholder={props.example}
          value={draft}
          onInput={(e) => setDraft(e.currentTarget.value)}
        />{" "}
        <button type="submit">Filter</button>
      </form>
      <span class="pager-pages">
        <button type="button" disabled={list.prev === undefined} onClick={() => list.prev?.()}>
          Previous
        </button>{" "}
        <span aria-label={`${props.label} page`}>page {list.page}</span>{" "}
        <button type="button" disabled={list.next === undefined} onClick={() => list.next?.()}>
          Next
        </button>
      </span>
    </div>
  );
}
