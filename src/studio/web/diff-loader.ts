// Loads the patch renderer (/diff.js and /diff.css, built beside app.js) the first time a page needs it.
type Renderer = typeof import("./diff-render");

let loading: Promise<Renderer> | null = null;

export function loadRenderer(): Promise<Renderer> {
  if (!loading) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = "/diff.css";
    document.head.appendChild(link);
    // A path held in a variable: esbuild leaves the import to the browser instead of bundling it.
    const url = "/diff.js";
    loading = (import(url) as Promise<Renderer>).catch((err) => {
      loading = null;
      throw err;
    });
  }
  return loading;
}
