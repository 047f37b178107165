const fs=require('fs');const p=JSON.parse(fs.readFileSync(process.argv[2]));
const byId=new Map(p.nodes.map(n=>[n.id,n]));const parent=new Map();for(const n of p.nodes)for(const c of n.children||[])parent.set(c,n.id);
const counts=new Map();for(let i=0;i<p.samples.length;i++)counts.set(p.samples[i],(counts.get(p.samples[i])||0)+(p.timeDeltas[i]||0));
const tot=[...counts.values()].reduce((a,b)=>a+b,0);console.log('total',(tot/1000).toFixed(0));
const self=new Map();const incl=new Map();
for(const [id,t] of counts){const n=byId.get(id);const k=(n.callFrame.functionName||'(anon)')+' '+n.callFrame.url.replace(/.*node_modules\//,'nm/').replace(/.*\/work\/main\//,'')+':'+n.callFrame.lineNumber;self.set(k,(self.get(k)||0)+t);
let cur=id;const seen=new Set();while(cur!==undefined){const m=byId.get(cur);const kk=(m.callFrame.functionName||'(anon)')+' '+m.callFrame.url.replace(/.*node_modules\//,'nm/').replace(/.*\/work\/main\//,'')+':'+m.callFrame.lineNumber;if(!seen.has(kk)){seen.add(kk);incl.set(kk,(incl.get(kk)||0)+t)}cur=parent.get(cur);}}
console.log('--self');console.log([...self].sort((a,b)=>b[1]-a[1]).slice(0,20).map(([k,v])=>(v/1000).toFixed(0)+' '+k).join('\n'));
console.log('--incl (src)');console.log([...incl].filter(([k])=>/dist\/|main/.test(k)).sort((a,b)=>b[1]-a[1]).slice(0,40).map(([k,v])=>(v/1000).toFixed(0)+' '+k).join('\n'));
