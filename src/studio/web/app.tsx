// The shell: header with the sections and the live indicator, the current page, the footer.
import { useEffect, useState } from "preact/hooks";
import { ApiError, loadSession, type Session } from "./api";
import { reportError, useErrors } from "./errors";
import { BudgetsPage } from "./budgets-page";
import { InboxPage } from "./inbox-page";
import { startStream, useConn } from "./live";
import { OutboxPage } from "./outbox-page";
import { RunPage } from "./run-page";
import { RunsPage } from "./runs-page";
import { SchedulesPage } from "./schedules-page";
import { TeamPage, TeamsPage } from "./teams-page";
import { useRoute, type Route } from "./router";

const SECTIONS = [
  { key: "runs", href: "#/", text: "Runs" },
  { key: "inbox", href: "#/inbox", text: "Inbox" },
  { key: "schedules", href: "#/schedules", text: "Schedules" },
  { key: "teams", href: "#/teams", text: "Teams" },
  { key: "budgets", href: "#/budgets", text: "Budgets" },
  { key: "outbox", href: "#/outbox", text: "Outbox" },
];

function section(r: Route): string {
  const p = r.path[0];
  return !p || p === "runs" ? "runs" : p;
}

function Page({ route }: { route: Route }) {
  const [a, b] = route.path;
  if (!a) return <RunsPage query={route.query} />;
  if (a === "runs" && b) return <RunPage id={b} />;
  if (a === "runs") return <RunsPage query={route.query} />;
  if (a === "schedules") return <SchedulesPage />;
  if (a === "teams" && b) return <TeamPage name={b} />;
  if (a === "teams") return <TeamsPage />;
  if (a === "budgets") return <BudgetsPage />;
  if (a === "inbox") return <InboxPage />;
  if (a === "outbox") return <OutboxPage />;
  return <section class="page"><p class="empty">No such page. <a href="#/">Runs</a></p></section>;
}

function Conn() {
  const s = useConn();
  const text = s === "live" ? "live" : s === "reconnecting" ? "reconnecting…" : "connecting…";
  return <span id="conn" class={`conn ${s}`} data-state={s} title="the change stream (/api/stream)"><span class="dot" />{text}</span>;
}

export function App() {
  const route = useRoute();
  const errors = useErrors();
  const [session, setSession] = useState<Session | null>(null);

  useEffect(() => {
    loadSession().then(
      (s) => { setSession(s); reportError("session", null); },
      (e) => reportError("session", e instanceof ApiError ? e.message : String(e)),
    );
    startStream();
  }, []);

  useEffect(() => {
    const s = section(route);
    document.title = `li studio · ${SECTIONS.find((x) => x.key === s)?.text ?? s}`;
  }, [route]);

  const current = section(route);
  return (
    <div class="shell">
      <header class="top">
        <a class="brand" href="#/">li studio</a>
        <nav>
          {SECTIONS.map((s) => (
            <a key={s.key} href={s.href} class={s.key === current ? "active" : ""} aria-current={s.key === current ? "page" : undefined}>{s.text}</a>
          ))}
        </nav>
        <Conn />
      </header>
      {errors.length > 0 && (
        <div id="error" class="banner" role="alert">
          {errors.map((m) => <div key={m}>{m}</div>)}
        </div>
      )}
      <main>
        <Page route={route} />
      </main>
      <footer>
        {session ? (
          <>
            <span>li <span id="li-version">{session.version}</span></span>
            <span> · LI_HOME <code class="mono" id="li-home">{session.li_home}</code></span>
          </>
        ) : <span class="muted">li studio</span>}
      </footer>
    </div>
  );
}
