// A pipeline's stages as a graph: a column per depth (after every stage it needs), arrows for `needs`.
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';

interface GraphStage {
  name: string;
  needs: string[];
}

interface Arrow {
  from: string;
  to: string;
  path: string;
}

/** Each stage's column: one after the deepest of the stages it needs (the definition has no cycle). */
function columnsOf<T extends GraphStage>(stages: readonly T[]): T[][] {
  const byName = new Map(stages.map((stage) => [stage.name, stage]));
  const depth = new Map<string, number>();
  const depthOf = (stage: T, seen: Set<string>): number => {
    const known = depth.get(stage.name);
    if (known !== undefined) return known;
    seen.add(stage.name);
    const needed = stage.needs.map((name) => byName.get(name)).filter((s): s is T => !!s && !seen.has(s.name));
    const own = needed.length ? Math.max(...needed.map((s) => depthOf(s, seen))) + 1 : 0;
    depth.set(stage.name, own);
    return own;
  };
  const columns: T[][] = [];
  for (const stage of stages) (columns[depthOf(stage, new Set())] ??= []).push(stage);
  return columns.filter(Boolean);
}

/** From the right edge of each needed stage's box to the left edge of the stage's, as drawn now. */
function arrowsOf(container: HTMLElement, stages: readonly GraphStage[]): Arrow[] {
  const origin = container.getBoundingClientRect();
  const boxes = new Map([...container.querySelectorAll<HTMLElement>('[data-stage-box]')].map((box) => [box.dataset.stageBox!, box.getBoundingClientRect()]));
  const at = (x: number, y: number) => `${Math.round(x - origin.left + container.scrollLeft)},${Math.round(y - origin.top + container.scrollTop)}`;
  return stages.flatMap((stage) =>
    stage.needs.flatMap((need) => {
      const from = boxes.get(need);
      const to = boxes.get(stage.name);
      if (!from || !to) return [];
      const [x1, y1, x2, y2] = [from.right, from.top + from.height / 2, to.left - 6, to.top + to.height / 2];
      const bend = Math.max(16, (x2 - x1) / 2);
      return [{ from: need, to: stage.name, path: `M${at(x1, y1)} C${at(x1 + bend, y1)} ${at(x2 - bend, y2)} ${at(x2, y2)}` }];
    }),
  );
}

/**
 * The stages as boxes in columns by depth, `box` drawing each; the arrows are drawn over the boxes'
 * places as laid out, again whenever a box changes size. Each box says in words what it needs too,
 * and a run's stage is edged in its status's colour.
 */
export function PipelineGraph<T extends GraphStage & { status?: string }>({ stages, label, box }: { stages: readonly T[]; label: string; box: (stage: T) => ComponentChildren }) {
  const container = useRef<HTMLDivElement>(null);
  const [arrows, setArrows] = useState<Arrow[]>([]);
  const [size, setSize] = useState({ width: 0, height: 0 });
  const columns = columnsOf(stages);

  useLayoutEffect(() => {
    const element = container.current;
    if (!element) return;
    const draw = () => {
      const next = arrowsOf(element, stages);
      setArrows((shown) => (JSON.stringify(shown) === JSON.stringify(next) ? shown : next));
      setSize((shown) => (shown.width === element.scrollWidth && shown.height === element.scrollHeight ? shown : { width: element.scrollWidth, height: element.scrollHeight }));
    };
    draw();
    const observer = new ResizeObserver(draw);
    observer.observe(element);
    element.querySelectorAll('[data-stage-box]').forEach((b) => observer.observe(b));
    return () => observer.disconnect();
  });

  return (
    <div class="pipeline-graph" ref={container} role="group" aria-label={label} style={{ gridTemplateColumns: `repeat(${columns.length}, minmax(12rem, 1fr))` }}>
      <svg class="pipeline-arrows" width={size.width} height={size.height} aria-hidden="true" focusable="false">
        <defs>
          <marker id="pipeline-arrowhead" viewBox="0 0 8 8" refX="2" refY="4" markerWidth="8" markerHeight="8" orient="auto">
            <path d="M0,0 L8,4 L0,8 z" />
          </marker>
        </defs>
        {arrows.map((arrow) => (
          <path key={`${arrow.from}>${arrow.to}`} d={arrow.path} data-arrow-from={arrow.from} data-arrow-to={arrow.to} marker-end="url(#pipeline-arrowhead)" />
        ))}
      </svg>
      {columns.map((column, i) => (
        <ul class="pipeline-column" key={i} aria-label={`Column ${i + 1}`}>
          {column.map((stage) => (
            <li key={stage.name} class={stage.status ? `stage-box stage-${stage.status}` : 'stage-box'} data-stage-box={stage.name} data-stage-status={stage.status}>
              {box(stage)}
              {stage.needs.length ? <p class="muted small">after {stage.needs.join(', ')}</p> : null}
            </li>
          ))}
        </ul>
      ))}
    </div>
  );
}
