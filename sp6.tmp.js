const fs=require('fs');const p=JSON.parse(fs.readFileSync(process.argv[2]));const want=new RegExp(process.argv[3]);
const counts=new Map();for(let i=0;i<p.samples.length;i++)counts.set(p.samples[i],(counts.get(p.samples[i])||0)+(p.timeDeltas[i]||0));
const byId=new Map(p.nodes.map(n=>[n.id,n]));const self=new Map();
for(const [id,t] of counts){const f=byId.get(id).callFrame;if(!want.test(f.url))continue;const k=f.functionName+' '+f.url.replace(/.*node_modules\//,'')+':'+f.lineNumber;self.set(k,(self.get(k)||0)+t);}
console.log([...self].sort((a,b)=>b[1]-a[1]).slice(0,15).map(([k,v])=>(v/1e6).toFixed(2)+' '+k).join('\n'));
