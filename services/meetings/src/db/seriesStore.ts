import type { Knex } from "@sched/db";
import type { Mode } from "@sched/proto";
import { readSeriesVersions, seriesWithExceptions, type VersionedSeries } from "./queries.js";

/** Most answers a store finds again by the text naming their versions, across modes. */
const MOST_NAMED = 1_000;

/** Most a store keeps, counting a series, each of its exceptions and each own answer of an occurrence as one: a few tens of MB at most. */
const MOST_KEPT = 200_000;

/**
 * The series a replica has read, each with all of its exceptions and its
 * occurrences' own answers, under the version its row had (012_series_versions;
 * an answer to one occurrence takes the next version too, 014_occurrence_answer_versions). A list or busy statement reads
 * the versions of the series it concerns beside its own rows; a series kept
 * under that version is used as kept, any other is read again (one statement
 * for all of them). Since every write of a series, its exceptions or its occurrences' answers takes
 * the next version in the database, a change through any replica is seen by
 * the next request on every replica, and nothing has to be told to forget.
 * The occurrences the rule gives are kept with the series record they were
 * expanded for (domain/series.ts), so they go when it goes.
 */
export class SeriesStore {
  private readonly kept = new Map<string, VersionedSeries>();
  private weight = 0;

  constructor(private readonly most = MOST_KEPT) {}

  /**
   * Answers by the text that named the series and their versions
   * (seriesVersionsSql's `id:version,…`), per mode: the same text names the
   * same series at the same versions, so a caller asking again with it (a
   * list or busy time repeated while nothing changed) gets the same answer
   * without reading the text or looking each series up again.
   */
  private readonly named = new Map<Mode, Map<string, VersionedSeries[]>>();
  private namedCount = 0;

  /** The series a statement named with their versions (`id:version,…`, null for none), as read() gives them. */
  async readNamed(db: Knex, mode: Mode, text: string | null): Promise<VersionedSeries[]> {
    if (!text) return [];
    let ofMode = this.named.get(mode);
    const known = ofMode?.get(text);
    if (known) return known;
    const answer = await this.read(db, mode, readSeriesVersions(text));
    if (this.namedCount >= MOST_NAMED) {
      this.named.clear();
      this.namedCount = 0;
      ofMode = undefined;
    }
    if (!ofMode) this.named.set(mode, (ofMode = new Map()));
    ofMode.set(text, answer);
    this.namedCount++;
    return answer;
  }

  /** The series named, as of at least the versions given; those gone since are left out. */
  private async read(db: Knex, mode: Mode, versions: readonly { id: string; version: number }[]): Promise<VersionedSeries[]> {
    const out: VersionedSeries[] = [];
    const missing: string[] = [];
    for (const { id, version } of versions) {
      const kept = this.kept.get(id);
      if (kept && kept.version >= version && kept.series.mode === mode) out.push(kept);
      else missing.push(id);
    }
    for (const fresh of await seriesWithExceptions(db, missing, mode)) {
      this.keep(fresh);
      out.push(fresh);
    }
    return out;
  }

  private keep(entry: VersionedSeries): void {
    const before = this.kept.get(entry.series.id);
    if (before) {
      this.kept.delete(entry.series.id);
      this.weight -= weightOf(before);
    }
    this.kept.set(entry.series.id, entry);
    this.weight += weightOf(entry);
    for (const [id, oldest] of this.kept) {
      if (this.weight <= this.most || id === entry.series.id) break;
      this.kept.delete(id);
      this.weight -= weightOf(oldest);
    }
  }
}

const weightOf = (entry: VersionedSeries) => 1 + entry.exceptions.length + entry.answerCount;
