// Where a run graph's nodes and edges go (dagre), computed again only when its shape changes.
import { graphlib, layout } from "@dagrejs/dagre";
import type { GraphData } from "./api";

export const NODE_W = 168;
export const NODE_H = 48;

export interface Placed {
  width: number;
  height: number;
  nodes: Map<string, { x: number; y: number }>;
  edges: { from: string; to: string; kind: string; d: string }[];
}

/** The graph's shape (nodes and edges, not their statuses): a layout is reused while it holds. */
export function shapeKey(g: GraphData): string {
  const nodes = g.nodes.map((n) => n.id).sort();
  const edges = g.edges.map((e) => `${e.from}>${e.to}:${e.kind}`).sort();
  return `${nodes.join(",")}|${edges.join(",")}`;
}

function pathOf(points: { x: number; y: number }[]): string {
  if (points.length === 0) return "";
  let d = `M${points[0].x},${points[0].y}`;
  if (points.length === 2) return `${d} L${points[1].x},${points[1].y}`;
  // A smooth curve through dagre's points: quadratic segments between midpoints.
  for (let i = 1; i < points.length - 1; i++) {
    const p = points[i];
    const n = points[i + 1];
    const mx = i === points.length - 2 ? n.x : (p.x + n.x) / 2;
    const my = i === points.length - 2 ? n.y : (p.y + n.y) / 2;
    d += ` Q${p.x},${p.y} ${mx},${my}`;
  }
  return d;
}

export function place(g: GraphData): Placed {
  const dg = new graphlib.Graph({ multigraph: true });
  dg.setGraph({ rankdir: "LR", nodesep: 28, ranksep: 64, marginx: 16, marginy: 16 });
  dg.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(g.nodes.map((n) => n.id));
  for (const n of g.nodes) dg.setNode(n.id, { width: NODE_W, height: NODE_H });
  const edges = g.edges.filter((e) => ids.has(e.from) && ids.has(e.to));
  edges.forEach((e, i) => dg.setEdge(e.from, e.to, { minlen: 1 }, `e${i}`));
  layout(dg);
  const nodes = new Map<string, { x: number; y: number }>();
  for (const id of dg.nodes()) {
    const n = dg.node(id) as { x: number; y: number };
    nodes.set(id, { x: n.x, y: n.y });
  }
  const placed = edges.map((e, i) => {
    const lab = dg.edge(e.from, e.to, `e${i}`) as { points?: { x: number; y: number }[] };
    return { ...e, d: pathOf(lab?.points ?? []) };
  });
  const gl = dg.graph() as { width?: number; height?: number };
  return { width: Math.max(gl.width ?? 0, NODE_W + 32), height: Math.max(gl.height ?? 0, NODE_H + 32), nodes, edges: placed };
}
