import { AppError } from "@sched/errors";

/**
 * What a form shows when a service refused what was typed (its own words, as
 * the API gives them); anything else, a 404 among them, goes on to the error
 * page.
 */
export async function refusalOf<T>(action: () => Promise<T>, alsoShown: readonly string[] = []): Promise<{ ok: true; value: T } | { ok: false; message: string; status: number }> {
  try {
    return { ok: true, value: await action() };
  } catch (err) {
    if (err instanceof AppError && err.code !== "not_found" && (err.status < 500 || alsoShown.includes(err.code))) return { ok: false, message: err.message, status: err.status };
    throw err;
  }
}
