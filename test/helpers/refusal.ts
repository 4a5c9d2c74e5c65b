/** For pure-logic suites: no Store or process fixtures are loaded. */

/** The message of the invalid_input error `fn` throws; fails when it throws nothing. */
export function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err: any) {
    expect(err.kind).toBe("invalid_input");
    return err.message;
  }
  throw new Error("expected a refusal");
}
