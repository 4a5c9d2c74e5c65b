/**
 * The gateway's read of an OpenAI model call's body (src/runtime/gateway/openai-body.ts): what
 * goes upstream is what li read, so no spelling of a field the upstream may read otherwise
 * (a duplicate key, a body JSON.parse refuses) gets a call served without usage.
 */
import { openaiBody } from "../src/runtime/gateway/openai-body.js";

const sent = (p: string, raw: string) => {
  const r = openaiBody(p, Buffer.from(raw));
  return "refuse" in r ? { refuse: r.refuse } : JSON.parse(r.body.toString());
};

test("a streamed chat completion gets include_usage, whatever duplicate stream_options it had", () => {
  expect(sent("/v1/chat/completions", '{"stream":true,"messages":[]}').stream_options).toEqual({ include_usage: true });
  expect(sent("/v1/chat/completions", '{"stream":true,"stream_options":{"include_usage":true},"stream_options":{"include_usage":false}}').stream_options).toEqual({ include_usage: true });
  expect(sent("/v1/chat/completions", '{"stream":false,"messages":[]}').stream_options).toBeUndefined();
});

test("a background response is refused, also behind a duplicate key; a body that is not one JSON object is refused", () => {
  expect(sent("/v1/responses", '{"background":true}')).toMatchObject({ refuse: expect.stringContaining("background") });
  // JSON.parse keeps the last; what is sent has it once, so an upstream keeping the first reads the same.
  expect(openaiBody("/v1/responses", Buffer.from('{"background":true,"background":false}'))).toEqual({ body: Buffer.from('{"background":false}') });
  expect(sent("/v1/responses", '{"background":true,}')).toMatchObject({ refuse: expect.stringContaining("JSON object") });
  expect(sent("/v1/responses", "[1]")).toMatchObject({ refuse: expect.stringContaining("JSON object") });
  expect(sent("/v1/responses", '{"input":"hi"}')).toEqual({ input: "hi" });
});
