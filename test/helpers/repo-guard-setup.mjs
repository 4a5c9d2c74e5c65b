import { guardStart } from "./repo-guard.mjs";

export default async function setup() {
  guardStart();
}
