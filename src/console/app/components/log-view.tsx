import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * A step's output, one numbered line per row, each with an anchor (`#L<step>-<line>`) a person can
 * paste. "Follow" keeps the last line in view as output arrives, and lets go when the person scrolls up.
 */
export function LogView({ output, anchor, label }: { output: string; anchor: string; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const lines = output.length ? output.replace(/\n$/, '').split('\n') : [];
  const target = location.hash.startsWith(`#L${anchor}-`) ? Number(location.hash.slice(anchor.length + 3)) : null;

  useLayoutEffect(() => {
    const el = box.current;
    if (el && follow && target === null) el.scrollTop = el.scrollHeight;
  }, [output, follow, target]);

  useEffect(() => {
    if (target === null) return;
    document.getElementById(`L${anchor}-${target}`)?.scrollIntoView({ block: 'center' });
    setFollow(false);
  }, [target, anchor, lines.length > 0]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 8;
    if (!atBottom && follow) setFollow(false);
  };

  return (
    <div class="log">
      <div class="log-bar">
        <span class="muted">{lines.length === 1 ? '1 line' : `${lines.length} lines`}</span>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow
        </label>
      </div>
      <div class="log-lines" ref={box} onScroll={onScroll} tabIndex={0} role="log" aria-label={label}>
        {lines.length === 0 ? <div class="muted log-empty">No output yet.</div> : null}
        {lines.map((line, i) => (
          <div class={`log-line${target === i + 1 ? ' log-line-target' : ''}`} id={`L${anchor}-${i + 1}`} key={i}>
            <a class="log-no" href={`#L${anchor}-${i + 1}`} aria-label={`Line ${i + 1}`}>
              {i + 1}
            </a>
            <span class="log-text">{line}</span>
          </div>
        ))}
      </div>
    </div>
  );
}
