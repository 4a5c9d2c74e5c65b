import fs from "node:fs";
import net from "node:net";
import path from "node:path";

/*
 * li's Unix sockets stay in the run's own directory (0700, under $LI_HOME), however deep: a path
 * over the kernel's bound (108 bytes with its NUL) is reached through a descriptor of its
 * directory, `/proc/self/fd/N/<name>`, for the bind and for a connect alike. There is no fallback
 * to a shared directory such as /tmp, where another run or process could reach the socket.
 */

const MAX_PATH = 100;

/** `fn(p)` with `p` a path of `file` short enough for a socket, through its directory's descriptor when the path is long. */
export function viaShortPath<T>(file: string, fn: (p: string) => T): T {
  if (file.length <= MAX_PATH) return fn(file);
  const dir = fs.openSync(path.dirname(file), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return fn(`/proc/self/fd/${dir}/${path.basename(file)}`);
  } finally {
    fs.closeSync(dir);
  }
}

/** Listens on the socket `file` (an old one removed), created 0600. */
export async function listenUnix(server: net.Server, file: string): Promise<void> {
  fs.rmSync(file, { force: true });
  // 0600 from the start: the umask covers the window between bind and chmod.
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      // The bind happens within listen(), before it returns: the descriptor may close after.
      viaShortPath(file, (p) => server.listen(p, () => resolve()));
    });
  } finally {
    process.umask(umask);
  }
  fs.chmodSync(file, 0o600);
}

/** A connection to the socket `file`, however long its path. */
export function connectUnix(file: string): net.Socket {
  return viaShortPath(file, (p) => net.createConnection(p));
}
