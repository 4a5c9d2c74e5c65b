import { render } from "preact";
import { App } from "./app";
import { adoptKeyFromUrl } from "./key";

adoptKeyFromUrl();
render(<App />, document.getElementById("app")!);
