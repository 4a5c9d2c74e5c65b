import { invalid, LiError } from "../../errors.js";
import type { Profile } from "../../config/profiles.js";
import { modelWithProfile } from "../submit/run-settings.js";
import type { Plan } from "./plan.js";

/*
 * Who runs a step: a model, a profile, or both (a profile's model may be replaced by another of
 * its provider's). A worker pool entry is `provider/model` or `profile:NAME`, so a fan-out can
 * give each worker its own profile; a plan step may name `profile:` itself; the session's
 * --profile applies to every run that names none of its own.
 */

export const PROFILE_PREFIX = "profile:";

/** NAME of a `profile:NAME` entry, else null. */
export function profileRef(entry: string): string | null {
  return entry.startsWith(PROFILE_PREFIX) ? entry.slice(PROFILE_PREFIX.length) : null;
}

/** Steps whose model came out as a `profile:NAME` pool entry get that profile instead. */
export function splitTargets(plan: Plan): Plan {
  return {
    steps: plan.steps.map((s) => {
      const ref = s.model === null ? null : profileRef(s.model);
      return ref === null ? s : { ...s, model: null, profile: ref };
    }),
  };
}

/**
 * Every step's profile (its own, else `fallback`) resolved, and its model settled against it.
 * A refusal names the step; one that blames a parameter keeps it (detail.field).
 */
export function resolveStepTargets(plan: Plan, fallback: string | null, resolve: (name: string) => Profile): Plan {
  return {
    steps: plan.steps.map((s) => {
      const name = s.profile ?? fallback;
      try {
        const profile = name === null ? null : resolve(name);
        return { ...s, profile: name, model: modelWithProfile(s.model, profile).spec };
      } catch (err) {
        if (err instanceof LiError && err.kind === "invalid_input") throw invalid(`step ${s.id}: ${err.message}`, { step: s.id, ...err.detail });
        throw err;
      }
    }),
  };
}
