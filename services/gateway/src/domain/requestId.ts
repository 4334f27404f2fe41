import { newId } from "@sched/ids";

const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id when it is a sane token, otherwise a fresh one. */
export function chooseRequestId(offered: string | undefined): string {
  return offered !== undefined && SANE.test(offered) ? offered : newId("req");
}
