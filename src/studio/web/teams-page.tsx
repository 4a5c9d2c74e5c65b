// #/teams and #/teams/NAME : teams, their members' counts and the messages between them.
import { enc, get, type Team, type TeamDetail } from "./api";
import { useLive } from "./live";
import { Age, Loading } from "./ui";

const teamHref = (name: string) => `#/teams/${encodeURIComponent(name)}`;

export function TeamsPage() {
  const live = useLive(() => get<{ teams: Team[] }>("/api/teams"), []);
  const list = live.data?.teams;
  return (
    <section class="page teams">
      <div class="page-head"><h2>Teams</h2></div>
      {!list ? live.loading && <Loading what="teams" /> : list.length === 0 ? <p class="empty">No teams. Make one with <code class="mono">li team create</code>.</p> : (
        <table class="grid">
          <thead><tr><th>name</th><th>members</th><th>messages</th><th>last message</th><th>created</th></tr></thead>
          <tbody>
            {list.map((t) => (
              <tr key={t.id} data-team={t.name}>
                <td><a href={teamHref(t.name)}><strong>{t.name}</strong></a></td>
                <td title={(t.members ?? []).join(", ")}>{t.member_count}</td>
                <td>{t.message_count}</td>
                <td><Age at={t.last_message_at} empty="none" /></td>
                <td><Age at={t.created_at} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function TeamPage({ name }: { name: string }) {
  const live = useLive(() => get<TeamDetail>(`/api/teams/${enc(name)}`), [name]);
  const d = live.data;
  return (
    <section class="page team">
      <div class="page-head"><h2><a href="#/teams">Teams</a> / {name}</h2></div>
      {!d ? live.loading && <Loading what={`team ${name}`} /> : (
        <>
          <section class="card">
            <h3>Members</h3>
            <table class="grid" id="members">
              <thead><tr><th>name</th><th>sent</th><th>received</th><th>unread</th><th>read</th></tr></thead>
              <tbody>
                {d.members.map((m) => (
                  <tr key={m.name} data-member={m.name}>
                    <td><strong>{m.name}</strong></td>
                    <td>{m.sent}</td>
                    <td>{m.received}</td>
                    <td>{m.unread ? <span class="badge blue">{m.unread}</span> : 0}</td>
                    <td><Age at={m.read_at} empty="never" /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section class="card">
            <h3>Messages <span class="muted small">({d.messages.length}{d.messages.length >= 200 ? ", the newest 200" : ""})</span></h3>
            {d.messages.length === 0 ? <p class="empty">No messages.</p> : (
              <ol id="messages" class="messages">
                {d.messages.map((m) => (
                  <li key={m.id} data-message-id={m.id}>
                    <div class="msg-head">
                      <strong>{m.from}</strong> → <strong>{m.to}</strong>
                      <span class="muted"><Age at={m.created_at} /></span>
                    </div>
                    <div class="msg-body">{m.body}</div>
                  </li>
                ))}
              </ol>
            )}
          </section>
        </>
      )}
    </section>
  );
}
