// A session's or play's graph: one box per run, arrows for what needs what.
import { useMemo } from "preact/hooks";
import { enc, get, type GraphData, type GraphNode } from "./api";
import { NODE_H, NODE_W, place, shapeKey } from "./graph-layout";
import { useLive } from "./live";
import { runHref } from "./router";
import { Loading, tone } from "./ui";

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const nameOf = (n: GraphNode) => n.label ?? n.step ?? n.role ?? n.id;

export function Graph({ runId }: { runId: string }) {
  const live = useLive(() => get<GraphData>(`/api/runs/${enc(runId)}/graph`), [runId]);
  const g = live.data;
  const key = g ? shapeKey(g) : "";
  const placed = useMemo(() => (g ? place(g) : null), [key]);

  if (!g || !placed) return <section class="card"><h3>Graph</h3>{live.loading && <Loading what="graph" />}</section>;
  const why = g.nodes.filter((n) => n.why);

  return (
    <section class="card" id="graph-section">
      <h3>Graph</h3>
      <div class="graph-wrap">
        <svg id="graph" xmlns="http://www.w3.org/2000/svg" width={placed.width} height={placed.height} viewBox={`0 0 ${placed.width} ${placed.height}`}>
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
              <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
            </marker>
          </defs>
          <g class="edges">
            {placed.edges.map((e) => (
              <path key={`${e.from}>${e.to}:${e.kind}`} class={`edge ${e.kind}`} d={e.d} marker-end="url(#arrow)" data-from={e.from} data-to={e.to} data-kind={e.kind} />
            ))}
          </g>
          <g class="nodes">
            {g.nodes.map((n) => {
              const p = placed.nodes.get(n.id);
              if (!p) return null;
              const x = p.x - NODE_W / 2;
              const y = p.y - NODE_H / 2;
              const name = nameOf(n);
              const tip = [`${name} (${n.kind}${n.role ? `, ${n.role}` : ""})`, `${n.status}${n.reason_code ? `: ${n.reason_code}` : ""}`, n.model ?? "", n.host ? `on ${n.host}` : "", n.why ?? "", n.id].filter(Boolean).join("\n");
              return (
                <g key={n.id} class={`node ${tone(n.status)}${n.id === g.root ? " root" : ""}`} data-node-id={n.id} data-step={name} data-status={n.status} data-host={n.host ?? ""}>
                  <a href={runHref(n.id)}>
                    <title>{tip}</title>
                    <rect x={x} y={y} width={NODE_W} height={NODE_H} rx="6" ry="6" />
                    <text x={p.x} y={p.y - 5} class="node-label" text-anchor="middle">{clip(name, 22)}</text>
                    <text x={p.x} y={p.y + 13} class="node-status" text-anchor="middle">{n.status}</text>
                  </a>
                </g>
              );
            })}
          </g>
        </svg>
      </div>
      <ul id="graph-why" class="why">
        {why.map((n) => <li key={n.id} data-node-id={n.id}>{`${nameOf(n)}: ${n.why}`}</li>)}
      </ul>
      <p class="legend muted small">
        <span class="swatch blue" /> running <span class="swatch grey" /> queued <span class="swatch green" /> completed
        <span class="swatch red" /> failed <span class="swatch amber" /> cancelled · dashed: owns
      </p>
    </section>
  );
}
