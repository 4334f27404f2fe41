import { isListening } from "./index.js";
import { listeningPorts } from "./listeningPorts.js";
import { freePort } from "./processes.js";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDAVClient } from "tsdav";

/** A tsdav client, logged in. */
export type DavClient = Awaited<ReturnType<typeof createDAVClient>>;

const RADICALE = "/usr/bin/radicale";
const PORT_ATTEMPTS = 3;

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
    const htpasswd = await this.writeUsers();
    // A free port is free only until someone binds it: another server that takes it first would answer in Radicale's place.
    for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
      const port = await freePort();
      const child = spawn(
        RADICALE,
        [
          ...["--server-hosts", `127.0.0.1:${port}`, "--storage-filesystem-folder", join(this.folder, "collections")],
          ...["--auth-type", "htpasswd", "--auth-htpasswd-filename", htpasswd, "--auth-htpasswd-encryption", "plain"],
          ...["--rights-type", "owner_only", "--logging-level", "warning"],
        ],
        { stdio: "ignore" },
      );
      this.process = child;
      this.url = `http://127.0.0.1:${port}/`;
      if (await this.listensOn(child, port)) return this.url;
    }
    throw new Error(`Radicale did not start: on ${PORT_ATTEMPTS} free ports it ended or did not listen within 30 s`);
  }

  /** Waits until `child` itself listens on `port`; false when it ended first (the port taken) or never did. */
  private async listensOn(child: ChildProcess, port: number): Promise<boolean> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      const owned = listeningPorts(child.pid!);
      if (owned ? owned.has(port) : await isListening(this.url, port)) return true;
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** A new password for a user, as when they revoke an app password: the next login with the old one is refused (Radicale reads the file at each login). */
  async changePassword(user: string, password: string): Promise<void> {
    this.users[user] = password;
    await this.writeUsers();
  }

  /** The htpasswd file of the users as they are now; its path. */
  private async writeUsers(): Promise<string> {
    const htpasswd = join(this.folder, "users");
    await writeFile(htpasswd, Object.entries(this.users).map(([name, secret]) => `${name}:${secret}\n`).join(""));
    return htpasswd;
  }

  /** A user's own client, as their calendar app would use it: makes calendars and events. */
  async client(user: string): Promise<DavClient> {
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
