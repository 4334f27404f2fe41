import { freePort, isListening } from "@sched/testing";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDAVClient } from "tsdav";

const RADICALE = "/usr/bin/radicale";

/** Whether Debian's Radicale is installed here (CI installs it). */
export const radicaleInstalled = (): boolean => existsSync(RADICALE);

/**
 * A real CalDAV server: Debian's Radicale on a free loopback port, with its
 * own storage folder and htpasswd users (plain passwords, which Radicale
 * 3.1 reads as they are), stopped and removed by `stop`.
 */
export class Radicale {
  private process: ChildProcess | undefined;
  private folder = "";
  url = "";

  constructor(private readonly users: Record<string, string>) {}

  async start(): Promise<string> {
    this.folder = await mkdtemp(join(tmpdir(), "radicale-"));
    const htpasswd = join(this.folder, "users");
    await writeFile(htpasswd, Object.entries(this.users).map(([user, password]) => `${user}:${password}\n`).join(""));
    const port = await freePort();
    this.process = spawn(
      RADICALE,
      [
        ...["--server-hosts", `127.0.0.1:${port}`, "--storage-filesystem-folder", join(this.folder, "collections")],
        ...["--auth-type", "htpasswd", "--auth-htpasswd-filename", htpasswd, "--auth-htpasswd-encryption", "plain"],
        ...["--rights-type", "owner_only", "--logging-level", "warning"],
      ],
      { stdio: "ignore" },
    );
    this.url = `http://127.0.0.1:${port}/`;
    const deadline = Date.now() + 30_000;
    while (!(await isListening(this.url, port))) {
      if (Date.now() > deadline || this.process.exitCode !== null) throw new Error("Radicale did not start");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return this.url;
  }

  /** A new password for a user, as when they revoke an app password: the next login with the old one is refused (Radicale reads the file at each login). */
  async changePassword(user: string, password: string): Promise<void> {
    this.users[user] = password;
    await writeFile(join(this.folder, "users"), Object.entries(this.users).map(([name, secret]) => `${name}:${secret}\n`).join(""));
  }

  /** A user's own client, as their calendar app would use it: makes calendars and events. */
  async client(user: string) {
    return createDAVClient({ serverUrl: this.url, credentials: { username: user, password: this.users[user]! }, authMethod: "Basic", defaultAccountType: "caldav" });
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    if (this.folder) await rm(this.folder, { recursive: true, force: true });
  }
}
