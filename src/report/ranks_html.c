/* The cross-rank view as one self-contained HTML page (ranks.h): the text view, a ranks x
 * marks heat map of live bytes, and each rank's timeline, opened by a click on its row. */
#include "ranks.h"
#include "common/json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char page_head[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>culeak: ranks</title>\n<style>\n"
    "body{font:13px sans-serif;margin:1em}pre{font:12px monospace;background:#f6f6f6;padding:.5em;overflow:auto}\n"
    "#heat{border-collapse:collapse}#heat td{width:12px;height:12px;padding:0;border:1px solid #fff}\n"
    "#heat th{font:11px monospace;text-align:right;padding-right:.5em;cursor:pointer;white-space:nowrap}\n"
    "#heat tr.differs th{color:#b00;font-weight:bold}#heat tr:hover th{text-decoration:underline}\n"
    "#timeline{margin-top:1em}#timeline svg{border:1px solid #ccc}\n"
    "</style></head><body>\n<h1>culeak: the ranks</h1>\n";

static const char page_script[] =
    "<h2>Live bytes at each mark (ranks &times; marks)</h2>\n"
    "<p>Darker: more device memory live at that mark, against the most any rank held. A click on a rank opens "
    "its timeline.</p>\n<table id=\"heat\"></table>\n<div id=\"timeline\"></div>\n<script>\n"
    "const D=JSON.parse(document.getElementById('data').textContent);\n"
    "function size(b){const u=['B','KiB','MiB','GiB','TiB'];let i=0;while(b>=1024&&i<4){b/=1024;i++}"
    "return (i?b.toFixed(1):b)+' '+u[i]}\n"
    "const heat=document.getElementById('heat');let most=1;\n"
    "for(const row of D.cross_rank.heatmap.live_bytes)for(const v of row)if(v!==null&&v>most)most=v;\n"
    "D.cross_rank.heatmap.live_bytes.forEach((row,i)=>{const r=D.cross_rank.ranks[i],tr=heat.insertRow();\n"
    " tr.id='rank-'+i;if(r.differs)tr.className='differs';const th=document.createElement('th');\n"
    " th.textContent=(r.rank>=0?'rank '+r.rank:'pid '+r.pid)+' on '+r.host;tr.appendChild(th);\n"
    " th.onclick=()=>show(i);row.forEach((v,c)=>{const td=tr.insertCell();td.onclick=()=>show(i);\n"
    "  if(v===null){td.style.background='#eee';td.title=D.cross_rank.heatmap.marks[c]+': no such mark';return}\n"
    "  const l=95-Math.round(60*v/most);td.style.background='hsl(10,80%,'+l+'%)';\n"
    "  td.title=th.textContent+', '+D.cross_rank.heatmap.marks[c]+': '+size(v)})});\n"
    "function show(i){const r=D.cross_rank.ranks[i],s=D.timelines[i],el=document.getElementById('timeline');\n"
    " const W=800,H=200;let t0=s.length?s[0][0]:0,t1=s.length?s[s.length-1][0]:1,m=1;\n"
    " for(const p of s)if(p[1]>m)m=p[1];if(t1<=t0)t1=t0+1;\n"
    " const pts=s.map(p=>((p[0]-t0)/(t1-t0)*W).toFixed(1)+','+(H-p[1]/m*(H-10)).toFixed(1)).join(' ');\n"
    " el.innerHTML='<h2></h2><svg width=\"'+W+'\" height=\"'+H+'\"><polyline fill=\"none\" stroke=\"#b30\" '+\n"
    "  'points=\"'+pts+'\"/></svg><p></p>';\n"
    " el.querySelector('h2').textContent='Timeline of '+(r.rank>=0?'rank '+r.rank:'pid '+r.pid)+' on '+r.host+\n"
    "  ' ('+r.file+')';\n"
    " el.querySelector('p').textContent='device memory live, 0 to '+size(m)+'; peak '+size(r.peak_bytes||0)+\n"
    "  ', live at the end '+size(r.live_bytes||0)+(r.fastest_suspect?', fastest suspect '+r.fastest_suspect:'');\n"
    " el.dataset.rank=i}\n"
    "/* opens on #rank=N, else on the first rank that differs, else the first to fill its device */\n"
    "const want=location.hash.match(/^#rank=(\\d+)$/),R=D.cross_rank.ranks;let open=0;\n"
    "const fill=D.cross_rank.first_to_fill,dif=R.findIndex(r=>r.differs);\n"
    "if(dif>=0)open=dif;else if(fill)open=Math.max(0,R.findIndex(r=>r.pid===fill.pid&&r.host===fill.host));\n"
    "if(want){const k=R.findIndex(r=>r.rank===+want[1]);if(k>=0)open=k}\n"
    "if(D.timelines.length)show(open);\n"
    "</script>\n</body></html>\n";

/* s with what would end the script element ("</") written as "<\/" */
static void put_script_safe(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<' && i + 1 < n && s[i + 1] == '/')
            fputs("<\\", f);
        else
            putc(s[i], f);
    }
}

static void put_html(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        switch (s[i]) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        default: putc(s[i], f);
        }
}

static void timelines(FILE *f, const struct ranks_view *r)
{
    fputs(",\"timelines\":[", f);
    for (size_t i = 0; i < r->ok; i++) {
        const struct rank_summary *s = &r->v[i];
        fputs(i ? ",[" : "[", f);
        for (size_t k = 0; k < s->nsamples; k++)
            fprintf(f, "%s[%" PRIu64 ",%" PRIu64 "]", k ? "," : "", s->samples[k].t_ns, s->samples[k].live_bytes);
        putc(']', f);
    }
    putc(']', f);
}

int ranks_html(FILE *f, const struct ranks_view *r, const struct report_options *o)
{
    char *text = NULL, *json = NULL;
    size_t ntext = 0, njson = 0;
    FILE *t = open_memstream(&text, &ntext), *j = open_memstream(&json, &njson);
    int rc = t && j ? 0 : -1;
    if (rc == 0)
        rc = ranks_text(t, r, o);
    if (rc == 0) {
        putc('{', j);
        rc = ranks_json(j, r, o);
        timelines(j, r);
        putc('}', j);
    }
    if (t && fclose(t) != 0)
        rc = -1;
    if (j && fclose(j) != 0)
        rc = -1;
    if (rc == 0) {
        fputs(page_head, f);
        fputs("<pre id=\"view\">", f);
        put_html(f, text, ntext);
        fputs("</pre>\n<script id=\"data\" type=\"application/json\">", f);
        put_script_safe(f, json, njson);
        fputs("</script>\n", f);
        fputs(page_script, f);
    }
    free(text);
    free(json);
    return rc != 0 || ferror(f) ? -1 : 0;
}
