import { render } from "preact";

render(<p>li studio</p>, document.getElementById("app")!);
