import { z } from "zod";

/** One setting: the environment variable that sets it and its schema, default included. */
export interface SettingDeclaration<V extends string = string, T extends z.ZodType = z.ZodType> {
  variable: V;
  schema: T;
}

/** Declares a setting read from `variable`. */
export const setting = <V extends string, T extends z.ZodType>(variable: V, schema: T): SettingDeclaration<V, T> => ({ variable, schema });

type Declarations = Record<string, SettingDeclaration>;
/** The environment's shape: one entry per variable. */
export type EnvironmentShape<D extends Declarations> = { [K in keyof D as D[K]["variable"]]: D[K]["schema"] };
/** The settings as code reads them: one entry per setting name. */
export type SettingsOf<D extends Declarations> = { [K in keyof D]: z.output<D[K]["schema"]> };

/**
 * A group of settings declared once each, so the environment schema, the
 * values code reads and the defaults cannot drift apart: every process
 * that runs the group (its own process, standalone mode, tests) parses the
 * same variables the same way.
 */
export function declareSettings<D extends Declarations>(declarations: D) {
  const entries = Object.entries(declarations);
  const environment = z.object(Object.fromEntries(entries.map(([, d]) => [d.variable, d.schema]))) as unknown as z.ZodObject<EnvironmentShape<D>>;
  const fromEnvironment = (parsed: Record<string, unknown>): SettingsOf<D> =>
    Object.fromEntries(entries.map(([name, d]) => [name, parsed[d.variable]])) as SettingsOf<D>;
  return {
    /** The zod schema of the variables, for `loadConfigOrExit` (it names a bad variable). */
    environment,
    /** The settings from a parsed environment. */
    fromEnvironment,
    /** What applies when the environment sets nothing. */
    defaults: fromEnvironment(environment.parse({})),
  };
}
