{# the page's own script, included inline by index.html.j2 after the content it filters #}
{% raw %}
(function(){
  var claims=[].slice.call(document.querySelectorAll('tr.claim'));
  var text=claims.map(function(r){return r.textContent.toLowerCase();});
  var sections=[].slice.call(document.querySelectorAll('section.study'));
  var overview=[].slice.call(document.querySelectorAll('tr.ov'));
  var q=document.getElementById('q'), lvl=document.getElementById('f-level'),
      fid=document.getElementById('f-fidelity'), count=document.getElementById('count');
  var boxes=[].slice.call(document.querySelectorAll('input[name=verdict]'));
  var onlyFails=document.getElementById('only-fails');
  var hide=(onlyFails.dataset.hide||'').split(' ');
  function apply(){
    var want={}; boxes.forEach(function(b){want[b.value]=b.checked;});
    var s=q.value.trim().toLowerCase(), per={}, n=0;
    claims.forEach(function(r,i){
      var d=r.dataset, ok=want[d.verdict] && (!lvl.value||d.level===lvl.value) &&
        (!fid.value||d.fidelity===fid.value) && (!s||text[i].indexOf(s)>=0);
      r.hidden=!ok; if(ok){n++; per[d.study]=(per[d.study]||0)+1;}
    });
    sections.forEach(function(x){x.hidden=!per[x.dataset.study];});
    overview.forEach(function(x){x.hidden=!per[x.dataset.study];});
    count.textContent=n+' of '+claims.length+' claims shown';
  }
  function reset(check){
    boxes.forEach(function(b){b.checked=check(b.value);}); lvl.value=''; fid.value=''; q.value=''; apply();
  }
  boxes.concat([lvl,fid]).forEach(function(e){e.addEventListener('change',apply);});
  q.addEventListener('input',apply);
  onlyFails.addEventListener('click',function(){reset(function(v){return hide.indexOf(v)<0;});});
  document.getElementById('show-all').addEventListener('click',function(){reset(function(){return true;});});
  apply();

  // The comparison with the last committed ledger, handed over by the hidden iframe's page
  // (claimbench diff --page). Under file:// every origin is "null": the sender is checked by its
  // window. What it says is written as text nodes, never parsed as markup.
  function el(tag,txt,cls){
    var n=document.createElement(tag);
    if(txt!==undefined) n.textContent=String(txt);
    if(cls) n.className=cls;
    return n;
  }
  window.addEventListener('message',function(ev){
    var frame=document.getElementById('diff-frame');      // after this script in the page
    if(!frame||ev.source!==frame.contentWindow) return;
    var d=ev.data; if(!d||typeof d!=='object'||d.kind!=='claimbench-diff') return;
    var changes=Array.isArray(d.changes)?d.changes:[];
    var p=el('p');
    p.append('Against the ledger of ',el('code',d.rev),': '+changes.length+' claim(s) changed');
    if(d.must_broke) p.append(', ',el('b',d.must_broke+' must claim(s) went from holds to fails'));
    p.append('.');
    var parts=[p];
    if(changes.length){
      var t=el('table'), head=el('tr');
      head.append(el('th','claim','key'),el('th','change'),el('th','verdict'),el('th','measured'));
      t.append(head);
      changes.forEach(function(c){
        c=c||{};
        var tr=el('tr');
        tr.append(el('td',c.key),el('td',c.change),el('td',c.old_verdict+' → '+c.new_verdict),
                  el('td',c.old_measured+' → '+c.new_measured));
        t.append(tr);
        var row=document.getElementById('claim-'+String(c.key).replace('/','--'));
        if(row&&row.classList.contains('claim')) row.classList.add('changed');
      });
      parts.push(t);
    }
    var box=document.getElementById('diff');
    box.replaceChildren.apply(box,parts);
  });
})();
{% endraw %}
