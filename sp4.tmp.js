const fs=require('fs');const p=JSON.parse(fs.readFileSync(process.argv[2]));
const byId=new Map(p.nodes.map(n=>[n.id,n]));const parent=new Map();for(const n of p.nodes)for(const c of n.children||[])parent.set(c,n.id);
const counts=new Map();for(let i=0;i<p.samples.length;i++)counts.set(p.samples[i],(counts.get(p.samples[i])||0)+(p.timeDeltas[i]||0));
let tot=0,idle=0;const cat=new Map();
for(const [id,t] of counts){const n=byId.get(id);tot+=t;if(n.callFrame.functionName==='(idle)'){idle+=t;continue;}
 let cur=id;let c='other';const chain=[];while(cur!==undefined){const m=byId.get(cur);chain.push(m.callFrame);cur=parent.get(cur);}
 // outermost-first
 chain.reverse();
 for(const f of chain){const u=f.url;
  if(/jest-runtime/.test(u)&&/requireModule|_execModule|requireModuleOrMock/.test(f.functionName)){c='module-load';break;}
  if(/@jest\/transform/.test(u)){c='transform';break;}
  if(/ts-jest/.test(u)){c='transform';break;}
 }
 if(c==='other'){const f=n.callFrame;if(f.functionName==='(garbage collector)')c='gc';else if(/mongodb|mongoose|bson/.test(f.url))c='mongo-driver';else if(/@temporalio/.test(f.url))c='temporal-sdk';else if(/\/src\/|\/workflows\/|\/activities\//.test(f.url))c='bosun-src';else if(/ssh2/.test(f.url))c='ssh2';else if(/jest/.test(f.url))c='jest';else if(f.url==='')c='native:'+f.functionName;else c='lib:'+f.url.replace(/.*node_modules\//,'').split('/')[0]}
 cat.set(c,(cat.get(c)||0)+t);}
console.log('total',(tot/1e6).toFixed(1),'idle',(idle/1e6).toFixed(1));
console.log([...cat].sort((a,b)=>b[1]-a[1]).slice(0,25).map(([k,v])=>(v/1e6).toFixed(2)+' '+k).join('\n'));
