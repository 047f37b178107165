const fs=require('fs');const p=JSON.parse(fs.readFileSync(process.argv[2]));const want=new RegExp(process.argv[3]);
const byId=new Map(p.nodes.map(n=>[n.id,n]));const parent=new Map();for(const n of p.nodes)for(const c of n.children||[])parent.set(c,n.id);
const counts=new Map();for(let i=0;i<p.samples.length;i++)counts.set(p.samples[i],(counts.get(p.samples[i])||0)+(p.timeDeltas[i]||0));
// for samples whose leaf matches want, attribute to the first non-matching ancestor chain (caller outside) 
const callers=new Map();
for(const [id,t] of counts){const n=byId.get(id);if(!want.test(n.callFrame.url+' '+n.callFrame.functionName))continue;
 let cur=parent.get(id);const path=[];while(cur!==undefined){const m=byId.get(cur);if(!want.test(m.callFrame.url+' '+m.callFrame.functionName)&&!/node:internal|^$/.test(m.callFrame.url)){path.push((m.callFrame.functionName||'anon')+'@'+m.callFrame.url.replace(/.*node_modules\//,'').replace(/.*work\/main\//,'')+':'+m.callFrame.lineNumber);if(path.length>=2)break;}cur=parent.get(cur);}
 const k=path.join(' < ');callers.set(k,(callers.get(k)||0)+t);}
console.log([...callers].sort((a,b)=>b[1]-a[1]).slice(0,20).map(([k,v])=>(v/1e6).toFixed(2)+' '+k).join('\n'));
