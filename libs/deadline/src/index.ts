/**
 * What `work` settles to, or what `late()` returns (or throws) once `ms` have
 * passed first. The timer is cleared either way, so a finished race never holds
 * the process open; `work` itself goes on (nothing here can stop it).
 */
export async function withinDeadline<T, L>(work: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<L>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (err) {
        reject(err as Error);
      }
    }, Math.max(0, ms));
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
