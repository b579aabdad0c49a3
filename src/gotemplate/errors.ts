/**
 * A template that cannot be parsed or rendered: `template: <name>:<line>:<col>: <problem>`, Go's
 * text/template wording with the column always given (Go gives it for execution errors only).
 */
export class TemplateError extends Error {
  constructor(
    readonly template: string,
    readonly line: number,
    readonly col: number,
    readonly problem: string,
  ) {
    super(`template: ${template}:${line}:${col}: ${problem}`);
    this.name = "TemplateError";
  }
}
