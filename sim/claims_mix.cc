// Claims about schedulers side by side on one workload: Matchmaking §IV
// (Figs. 2-7), JoSS §6 (Figs. 7-14, Tables 8-10), Shen §III (Figs. 4-7),
// and the simulator's own performance target. See claims.h.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "sim/claims.h"

namespace mr::sim {
namespace {

// One bar per scheduler.
svg::BarChart Bars(const Runs& runs, const std::string& title, const std::string& y_label,
                   const std::string& metric, double scale) {
  svg::BarChart c{title, y_label, {}, {y_label}, {{}}};
  for (const Json* r : runs) {
    c.groups.push_back((*r)["label"]);
    c.values[0].push_back(Get(*r, metric) * scale);
  }
  return c;
}

// VPS / Cen / off-Cen shares per scheduler (JoSS Eqs. 9-11).
svg::BarChart LocalityBars(const Runs& runs, const std::string& title) {
  svg::BarChart c{title, "share of maps", {}, {"VPS-locality", "Cen-locality", "off-Cen"}, {{}, {}, {}}};
  for (const Json* r : runs) {
    c.groups.push_back((*r)["label"]);
    c.values[0].push_back(Get(*r, "vps_locality_rate"));
    c.values[1].push_back(Get(*r, "cen_locality_rate"));
    c.values[2].push_back(Get(*r, "off_cen_rate"));
  }
  return c;
}

svg::LineChart JttCdf(const Runs& runs, const std::string& title, bool with_sweep) {
  svg::LineChart c{title, "job turnaround time (s)", "fraction of jobs", {}, false, true};
  for (const Json* r : runs) {
    std::string name = (*r)["label"];
    if (with_sweep && !(*r)["sweep"].empty()) name += " " + (*r)["sweep"].begin().value().get<std::string>();
    svg::Series s{name, {}};
    for (const Json& p : (*r)["jtt_cdf"]) s.points.emplace_back(p[0].get<double>() / 1000, p[1].get<double>());
    c.series.push_back(s);
  }
  return c;
}

double TypeMetric(const Json& r, const std::string& type, const std::string& key) {
  return r["by_type"].contains(type) ? Get(r["by_type"][type], key) : NAN;
}

std::string Verdict(bool full, bool part) { return full ? "reproduced" : part ? "partly" : "not"; }

// The value of sweep axis `axis` in `run` as a number; NaN if the run does
// not sweep it.
double AxisValue(const Json& run, const std::string& axis) {
  if (!run.contains("sweep") || !run["sweep"].contains(axis)) return NAN;
  try {
    return std::stod(run["sweep"][axis].get<std::string>());
  } catch (const std::exception&) {
    return NAN;
  }
}

// A section judged at one value of a cost the scenario sweeps (issue 13
// item 4: Matchmaking's remote slowdown, JoSS's inter-datacenter bandwidth).
// `build` makes the section of one sweep point's runs; the section returned
// is the headline point's (value `headline`, else the lowest swept), with
// charts and table of its runs only, and each claim's measured text followed
// by the verdict at every other point; a table gives every point's verdict
// and numbers per claim. Runs that do not sweep `axis` are one point: then
// this is `build(runs)`. Called by MatchmakingSection and JossSection.
template <typename Build>
std::optional<Section> PerPoint(const Runs& runs, const std::string& axis, double headline, Build build) {
  std::map<double, Runs> points;  // by value; NaN (not swept) never mixes with a value
  bool unswept = false;
  for (const Json* r : runs) {
    const double v = AxisValue(*r, axis);
    if (std::isnan(v)) unswept = true;
    else points[v].push_back(r);
  }
  if (unswept || points.size() < 2) return build(runs);
  const std::string name = axis.substr(axis.rfind('.') + 1);
  auto text = [&](double v) { return (*points[v].front())["sweep"][axis].get<std::string>(); };
  const double head = points.count(headline) ? headline : points.begin()->first;
  std::optional<Section> s = build(points[head]);
  if (!s) return s;
  std::map<double, std::optional<Section>> others;
  for (const auto& [v, rs] : points) {
    if (v != head) others[v] = build(rs);
  }
  std::vector<std::string> header{"claim", name + " " + text(head) + " (headline)"};
  for (const auto& [v, o] : others) header.push_back(name + " " + text(v));
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < s->claims.size(); ++i) {
    Claim& c = s->claims[i];
    std::vector<std::string> row{c.source, c.verdict + ": " + c.measured};
    std::string beside;
    for (const auto& [v, o] : others) {
      const bool has = o && i < o->claims.size();
      beside += "; " + name + " " + text(v) + ": " + (has ? o->claims[i].verdict : "–");
      row.push_back(has ? o->claims[i].verdict + ": " + o->claims[i].measured : "–");
    }
    c.measured += " [at " + name + " " + text(head) + beside + "]";
    rows.push_back(row);
  }
  std::string swept;
  for (const auto& [v, rs] : points) swept += (swept.empty() ? "" : ", ") + text(v);
  s->title += "; headline at " + name + " = " + text(head) + " (swept: " + swept + ")";
  for (Chart& ch : s->charts) ch.caption += " (" + name + " = " + text(head) + ")";
  s->table = "Runs at " + name + " = " + text(head) + " (the headline):\n\n" + s->table +
             "\nEvery claim at each swept " + name + ":\n\n" + Table(header, rows);
  return s;
}

}  // namespace

namespace {

// Matchmaking's claims at one remote slowdown (see MatchmakingSection).
std::optional<Section> MatchmakingPoint(const Runs& runs) {
  Section s;
  s.title = "Matchmaking vs delay scheduling (Matchmaking §IV, Figs. 2-7)";
  s.charts.push_back({"locality", "Figs. 2, 3, 6: data locality rate per scheduler",
                      svg::Render(Bars(runs, "matchmaking: data locality rate", "node-local maps", "vps_locality_rate", 1))});
  s.charts.push_back({"response", "Figs. 4, 5, 7: average map response time per scheduler",
                      svg::Render(Bars(runs, "matchmaking: map response time", "seconds", "map_response_ms", 0.001))});
  std::vector<std::vector<std::string>> rows;
  for (const Json* r : runs) {
    rows.push_back({(*r)["label"], Fmt(Get(*r, "vps_locality_rate"), 3), Fmt(Get(*r, "map_response_ms") / 1000, 1),
                    Fmt(Get(*r, "jtt_ms") / 1000, 1)});
  }
  s.table = Table({"scheduler", "locality", "map response s", "JTT s"}, rows);
  const Json* mm = Find(runs, "fifo-matchmaking");
  const Json* fifo = Find(runs, "fifo");
  const Json* fmm = Find(runs, "fair-matchmaking");
  const Json* fdelay = Find(runs, "fair-delay");
  if (!mm || !fifo || !fmm || !fdelay) return s;
  double best_loc = 0, best_resp = INFINITY, min_resp = INFINITY;
  std::string best_loc_by, best_resp_by;
  std::vector<double> delay_loc;
  for (const Json* r : runs) {
    min_resp = std::min(min_resp, Get(*r, "map_response_ms"));
    const std::string label = (*r)["label"];
    if (label.rfind("fifo-delay", 0) != 0) continue;
    delay_loc.push_back(Get(*r, "vps_locality_rate"));
    if (Get(*r, "vps_locality_rate") > best_loc) best_loc = Get(*r, "vps_locality_rate"), best_loc_by = label;
    if (Get(*r, "map_response_ms") < best_resp) best_resp = Get(*r, "map_response_ms"), best_resp_by = label;
  }
  const double loc = Get(*mm, "vps_locality_rate"), resp = Get(*mm, "map_response_ms");
  s.claims.push_back({"Matchmaking §IV-B, Figs. 2-3",
                      "when we integrate our matchmaking technique with the FIFO scheduler, the algorithm achieves "
                      "the highest data locality rate, better than any of those achieved with the delay algorithm "
                      "of different D values.",
                      Verdict(loc > best_loc, loc > Get(*fifo, "vps_locality_rate")),
                      "fifo-matchmaking " + Fmt(loc, 3) + "; fifo " + Fmt(Get(*fifo, "vps_locality_rate"), 3) +
                          "; best delay " + best_loc_by + " " + Fmt(best_loc, 3)});
  s.claims.push_back({"Matchmaking §IV-B, Figs. 4-5",
                      "For both workloads, the FIFO scheduler with our matchmaking algorithm achieves the lowest "
                      "average response time, better than that achieved by the optimally-configured delay algorithm.",
                      Verdict(resp < best_resp && resp < Get(*fifo, "map_response_ms"), resp < best_resp),
                      "map response: fifo-matchmaking " + Fmt(resp / 1000, 1) + " s; fifo " +
                          Fmt(Get(*fifo, "map_response_ms") / 1000, 1) + " s; best delay " + best_resp_by + " " +
                          Fmt(best_resp / 1000, 1) + " s"});
  bool increasing = delay_loc.size() > 1;
  for (size_t i = 1; i < delay_loc.size(); ++i) increasing = increasing && delay_loc[i] >= delay_loc[i - 1];
  s.claims.push_back({"Matchmaking §IV-B, Figs. 2-3",
                      "the data locality rate achieved with the delay algorithm increases with the maximum delay time D.",
                      Verdict(increasing, delay_loc.size() > 1 && delay_loc.back() > delay_loc.front()),
                      "fifo-delay locality from D = 0.3 s to 30 s: " + Fmt(delay_loc.empty() ? NAN : delay_loc.front(), 3) +
                          " → " + Fmt(delay_loc.empty() ? NAN : delay_loc.back(), 3) +
                          (increasing ? " (non-decreasing)" : " (not monotone)")});
  const bool better_loc = Get(*fmm, "vps_locality_rate") > Get(*fdelay, "vps_locality_rate");
  const bool near_opt = Get(*fmm, "map_response_ms") <= 1.1 * min_resp;
  s.claims.push_back({"Matchmaking §IV-B, Figs. 6-7",
                      "when integrated with the fair sharing scheduling, our matchmaking algorithm still achieves "
                      "better data locality rates and near-optimal average response times.",
                      Verdict(better_loc && near_opt, better_loc || near_opt),
                      "locality fair-matchmaking " + Fmt(Get(*fmm, "vps_locality_rate"), 3) + " vs fair-delay " +
                          Fmt(Get(*fdelay, "vps_locality_rate"), 3) + "; response " +
                          Fmt(Get(*fmm, "map_response_ms") / 1000, 1) + " s vs best of all " + Fmt(min_resp / 1000, 1) +
                          " s (near-optimal: within 10 %)"});
  return s;
}

}  // namespace

// The paper gives no slowdown of a non-local map: its cluster is one rack
// on 1 Gbit/s Ethernet (§IV-A, Table 3), which the scenario's link model
// already charges for each remote read. The headline is therefore slowdown
// 1, nothing added to that read; 1.5 and 2 are what Pandas measured on EC2
// (Pandas §VII-A1a, §VII-B1), shown beside it, never chosen by their result.
std::optional<Section> MatchmakingSection(const Runs& runs) {
  return PerPoint(runs, "service.remote_slowdown", 1.0, MatchmakingPoint);
}

namespace {

// The baseline a JoSS claim is judged against: Hadoop 0.20.2's ("FIFO 0.20"),
// the paper's (JoSS §1, §6), when the scenario runs it; else today's ("FIFO
// 1.x"); else a plain "FIFO" (files written before issue 13).
const Json* JossBaseline(const Runs& runs, const std::string& name) {
  for (const char* suffix : {" 0.20", " 1.x", ""}) {
    if (const Json* r = Find(runs, name + suffix)) return r;
  }
  return nullptr;
}

// JoSS's claims at one inter-datacenter bandwidth (see JossSection).
std::optional<Section> JossPoint(const std::string& scenario, const Runs& runs) {
  // joss-small / joss-mixed: the primary run (job-datacenter placement,
  // 0.20.2 baselines); joss-*-uniform: the second (uniform, 1.x).
  const bool mixed = scenario.rfind("joss-mixed", 0) == 0;
  const bool uniform = scenario.size() > 8 && scenario.substr(scenario.size() - 8) == "-uniform";
  const std::vector<std::string> mh = {"wc", "sc", "ii", "grep"};  // FP < td = 2 (Table 5)
  const std::vector<std::string> types = {"wc", "sc", "ii", "grep", "permu"};
  Section s;
  s.title = std::string(mixed ? "JoSS, the mixed workload (JoSS §6.2, Figs. 11-14, Table 10)"
                              : "JoSS, the small workload (JoSS §6.1, Figs. 7-10, Tables 8-9)") +
            (uniform ? ", second run: uniform placement, Hadoop 1.x baselines"
                     : ", primary run: job-datacenter placement, Hadoop 0.20.2 baselines");
  s.charts.push_back({"locality", std::string(mixed ? "Fig. 11" : "Fig. 7") + ": map-data locality per scheduler",
                      svg::Render(LocalityBars(runs, scenario + ": map-data locality"))});
  svg::BarChart off{scenario + ": off-Cen rate per job type", "off-Cen rate", types, {}, {}};
  svg::BarChart rdl{scenario + ": reduce-data locality per job type", "reduce-data locality", types, {}, {}};
  for (const Json* r : runs) {
    off.series.push_back((*r)["label"]);
    rdl.series.push_back((*r)["label"]);
    off.values.emplace_back();
    rdl.values.emplace_back();
    for (const std::string& t : types) {
      off.values.back().push_back(TypeMetric(*r, t, "off_cen_rate"));
      rdl.values.back().push_back(TypeMetric(*r, t, "reduce_data_locality_rate"));
    }
  }
  s.charts.push_back({"offcen", std::string(mixed ? "Fig. 11" : "Fig. 7") + ": off-Cen rate per benchmark",
                      svg::Render(off)});
  s.charts.push_back({"rdl", std::string(mixed ? "Fig. 12" : "Fig. 8") + ": reduce-data locality per benchmark",
                      svg::Render(rdl)});
  s.charts.push_back({"int", std::string(mixed ? "Fig. 13" : "Fig. 9") + ": inter-datacenter traffic per scheduler",
                      svg::Render(Bars(runs, scenario + ": INT", "GB", "inter_dc_bytes", 1.0 / (1 << 30)))});
  s.charts.push_back({"jtt-cdf", "JTT CDF per scheduler", svg::Render(JttCdf(runs, scenario + ": JTT CDF", false))});
  std::vector<std::vector<std::string>> rows;
  for (const Json* r : runs) {
    rows.push_back({(*r)["label"], Fmt(Get(*r, "vps_locality_rate"), 3), Fmt(Get(*r, "cen_locality_rate"), 3),
                    Fmt(Get(*r, "off_cen_rate"), 3), Fmt(Get(*r, "reduce_data_locality_rate"), 3),
                    Fmt(Get(*r, "inter_dc_bytes") / (1 << 30), 1), Fmt(Get(*r, "jtt_ms") / 1000, 1),
                    Fmt(Get(*r, "wtt_ms") / 1000, 0), Fmt(Get(*r, "node_load_mean"), 2) + " ± " +
                    Fmt(Get(*r, "node_load_sd"), 2)});
  }
  s.table = Table({"scheduler", "VPS", "Cen", "off-Cen", "reduce-data loc.", "INT GB", "JTT s", "WTT s", "maps per VPS"}, rows);
  const Json* jt = Find(runs, "JoSS-T");
  const Json* jj = Find(runs, "JoSS-J");
  const std::vector<std::string> others = {"FIFO", "Fair", "Capa"};
  std::map<std::string, const Json*> base;  // the baselines judged against
  for (const std::string& o : others) {
    if (!(base[o] = JossBaseline(runs, o))) return s;
  }
  if (!jt || !jj) return s;
  // The runs a claim compares: JoSS-T, JoSS-J and the three baselines.
  const Runs compared = {jt, jj, base["FIFO"], base["Fair"], base["Capa"]};
  std::string vs;  // "FIFO 0.20/Fair 0.20/Capa 0.20"
  for (const std::string& o : others) vs += (vs.empty() ? "" : "/") + (*base[o])["label"].get<std::string>();
  // Off-Cen of map-heavy jobs: near zero (≤ 0.05) for JoSS, far lower
  // (by ≥ 0.05) than every other scheduler.
  double joss_max = 0, others_min = INFINITY;
  for (const std::string& t : mh) {
    joss_max = std::max({joss_max, TypeMetric(*jt, t, "off_cen_rate"), TypeMetric(*jj, t, "off_cen_rate")});
    for (const std::string& o : others) others_min = std::min(others_min, TypeMetric(*base[o], t, "off_cen_rate"));
  }
  s.claims.push_back({mixed ? "JoSS §6.2, Fig. 11" : "JoSS §6.1, Fig. 7",
                      mixed ? "for all tested MH jobs (i.e., WC, SC, II, and Grep jobs), JoSS-T and JoSS-J had similar "
                              "off-Cen rates, which were still much lower than those of the other three algorithms."
                            : "When JoSS-T and JoSS-J were used to run small MH jobs (i.e., those WC, SC, II, and Grep "
                              "jobs), the corresponding off-Cen rates are not only far lower than those of the other "
                              "algorithms, but also close to zero",
                      Verdict(joss_max <= 0.05 && others_min >= joss_max + 0.05, joss_max <= 0.05 || others_min > joss_max),
                      "highest JoSS off-Cen over the MH types " + Fmt(joss_max, 3) +
                          "; lowest of " + vs + " over the MH types " + Fmt(others_min, 3)});
  // Reduce-data locality: JoSS above the others for every type, clearly for Permu.
  bool every = true;
  double permu_gap = INFINITY;
  for (const std::string& t : types) {
    for (const std::string& o : others) {
      const double gap = std::min(TypeMetric(*jt, t, "reduce_data_locality_rate"), TypeMetric(*jj, t, "reduce_data_locality_rate")) -
                         TypeMetric(*base[o], t, "reduce_data_locality_rate");
      every = every && gap > 0;
      if (t == "permu") permu_gap = std::min(permu_gap, gap);
    }
  }
  s.claims.push_back({mixed ? "JoSS §6.2, Fig. 12" : "JoSS §6.1, Fig. 8",
                      mixed ? "the two variations of JoSS outperform the other algorithms in every benchmark and job type."
                            : "JoSS-T and JoSS-J provided a higher reduce-data locality rate than the other three "
                              "algorithms, especially when RH jobs were executed.",
                      Verdict(every && permu_gap >= 0.1, permu_gap > 0),
                      "JoSS above " + vs + " for every type: " + std::string(every ? "yes" : "no") +
                          "; smallest JoSS lead on Permu " + Fmt(permu_gap, 3)});
  const double joss_int = (Get(*jt, "inter_dc_bytes") + Get(*jj, "inter_dc_bytes")) / 2;
  std::string ratios;
  bool near = true, lower = true;
  const double paper[] = {0.3344, 0.3216, 0.3543};
  for (size_t i = 0; i < others.size(); ++i) {
    const Json& b = *base[others[i]];
    const double ratio = joss_int / Get(b, "inter_dc_bytes");
    ratios += (i ? ", " : "") + b["label"].get<std::string>() + " " + Fmt(100 * ratio, 1) + " %";
    near = near && std::abs(ratio - paper[i]) <= 0.1;
    lower = lower && ratio < 0.8;
  }
  // Today's baselines beside the 0.20.2 ones, when the scenario runs both.
  std::string today;
  for (const std::string& o : others) {
    const Json* r = Find(runs, o + " 1.x");
    if (!r || r == base[o]) continue;
    today += (today.empty() ? "; of today's: " : ", ") + o + " 1.x " +
             Fmt(100 * joss_int / Get(*r, "inter_dc_bytes"), 1) + " %";
  }
  ratios += today;
  if (mixed) {
    s.claims.push_back({"JoSS §6.2, Fig. 13",
                        "The results depicted in Fig. 13 shows that the INTs of JoSS-T and JoSS-J are only 33.44%, "
                        "32.16%, 35.43% of those of FIFO, Fair, and Capa, respectively.",
                        Verdict(near, lower), "JoSS's mean INT as a share of: " + ratios});
    double best = INFINITY, worst = 0;
    std::string best_by, worst_by;
    for (const Json* r : compared) {
      if (Get(*r, "wtt_ms") < best) best = Get(*r, "wtt_ms"), best_by = (*r)["label"];
      if (Get(*r, "wtt_ms") > worst) worst = Get(*r, "wtt_ms"), worst_by = (*r)["label"];
    }
    s.claims.push_back({"JoSS §6.2, Fig. 14",
                        "Among all algorithms, FIFO consumed the longest time to complete the entire mixed workload. "
                        "[…] JoSS-J led to the shortest WTT among all tested algorithms",
                        Verdict(best_by == "JoSS-J" && worst_by == (*base["FIFO"])["label"],
                                best_by == "JoSS-J" || worst_by == (*base["FIFO"])["label"]),
                        "shortest WTT " + best_by + " " + Fmt(best / 1000, 0) + " s; longest " + worst_by + " " +
                            Fmt(worst / 1000, 0) + " s; JoSS-J " + Fmt(Get(*jj, "wtt_ms") / 1000, 0) + " s"});
    double sd_min = INFINITY;
    std::string sd_by;
    for (const Json* r : compared) {
      if (Get(*r, "node_load_sd") < sd_min) sd_min = Get(*r, "node_load_sd"), sd_by = (*r)["label"];
    }
    s.claims.push_back({"JoSS §6.2, Table 10",
                        "Among all tested algorithms, JoSS-T led to the smallest standard deviation (i.e., the best "
                        "load balance between VPSs)",
                        Verdict(sd_by == "JoSS-T", false), "smallest SD of maps per VPS: " + sd_by + " " + Fmt(sd_min, 2) +
                            "; JoSS-T " + Fmt(Get(*jt, "node_load_sd"), 2)});
  } else {
    s.claims.push_back({"JoSS §6.1, Fig. 9",
                        "both JoSS-T and JoSS-J have a much lower INT compared with the other three algorithms",
                        Verdict(lower, joss_int < 1), "JoSS's mean INT as a share of: " + ratios});
    // Table 8: JTT normalized to JoSS-T's, per benchmark.
    std::string norm;
    bool shortest_all = true;
    double mean_ratio = 0;
    int n = 0;
    for (const std::string& t : types) {
      const double base = TypeMetric(*jt, t, "jtt_ms");
      norm += (norm.empty() ? "" : "; ") + t + ":";
      for (const Json* r : compared) {
        if (r == jt) continue;
        const double ratio = TypeMetric(*r, t, "jtt_ms") / base;
        norm += " " + (*r)["label"].get<std::string>() + " " + Fmt(ratio, 2);
        shortest_all = shortest_all && ratio >= 1;
        mean_ratio += ratio, ++n;
      }
    }
    s.claims.push_back({"JoSS §6.1, Fig. 10 and Table 8",
                        "No matter which benchmark was executed, JoSS-T led to the shortest average JTT among all "
                        "algorithms. (Table 8: the others at 1.05-1.55 × JoSS-T's JTT.)",
                        Verdict(shortest_all && mean_ratio / n >= 1.05, shortest_all), "JTT ÷ JoSS-T's, " + norm});
    double sd_fifo = Get(*base["FIFO"], "node_load_sd"), sd_others = 0, sd_joss = 0;
    bool fifo_min = true;
    for (const Json* r : compared) {
      fifo_min = fifo_min && Get(*r, "node_load_sd") >= sd_fifo;
      if (r == jt || r == jj) sd_joss = std::max(sd_joss, Get(*r, "node_load_sd"));
      else sd_others = std::max(sd_others, Get(*r, "node_load_sd"));
    }
    const bool joss_higher = std::min(Get(*jt, "node_load_sd"), Get(*jj, "node_load_sd")) > sd_others;
    s.claims.push_back({"JoSS §6.1, Table 9",
                        "it is inevitable that JoSS-T and JoSS-J have a higher standard deviation than the other "
                        "algorithms because of policies A and B. Among all tested algorithms, FIFO achieved the best "
                        "load balance",
                        Verdict(joss_higher && fifo_min, joss_higher || fifo_min),
                        "SD of maps per VPS: JoSS-T " + Fmt(Get(*jt, "node_load_sd"), 2) + ", JoSS-J " +
                            Fmt(Get(*jj, "node_load_sd"), 2) + ", highest of " + vs + " " + Fmt(sd_others, 2) + ", " +
                            (*base["FIFO"])["label"].get<std::string>() + " " +
                            Fmt(sd_fifo, 2)});
  }
  return s;
}

// Shen Table III counts node-local, rack-local and remote tasks, maps and
// reduces. A reduce reads from every map, so it has no one "machine with
// data for that task": its locality here is the share of its input bytes
// that it read on its own node (node-local) and within its rack from
// another node (rack-local), from the run's shuffle_bytes.
double ShuffleShare(const Json& r, const char* level) {
  const Json& b = r["shuffle_bytes"];
  const double all = b["node"].get<double>() + b["rack"].get<double>() + b["dc"].get<double>() +
                     b["off_dc"].get<double>();
  return all > 0 ? b[level].get<double>() / all : NAN;
}

}  // namespace

// The paper gives no bandwidth between its Dallas and Atlanta datacenters
// (JoSS §6: Linode VPSs). The headline stays at the scenario's 62.5 MB/s
// (500 Mbit/s), the value every earlier verdict used; 25 MB/s is a slower
// link, shown beside it to tell which verdicts turn on that assumption.
std::optional<Section> JossSection(const std::string& scenario, const Runs& runs) {
  return PerPoint(runs, "network.dc_mb_s", 62.5, [&](const Runs& r) { return JossPoint(scenario, r); });
}

std::optional<Section> ProbabilisticSection(const std::string& scenario, const Runs& runs) {
  Section s;
  s.title = scenario == "probabilistic"
                ? "Probabilistic network-aware placement vs Fair (Shen §III, Figs. 4-7, Table III)"
                : "Probabilistic vs Fair on 3 racks, link-rate costs (Shen §II-B3 on the §III workload)";
  const std::vector<std::string> batches = {"wordcount", "terasort", "grep"};
  svg::BarChart jtt{"probabilistic: mean JTT per batch", "seconds", batches, {}, {}};
  svg::BarChart loc{"probabilistic: node-local maps per batch", "share of maps", batches, {}, {}};
  for (const std::string& label : Labels(runs)) {
    jtt.series.push_back(label);
    loc.series.push_back(label);
    jtt.values.emplace_back();
    loc.values.emplace_back();
    for (const std::string& b : batches) {
      const Json* r = Find(runs, label, b);
      jtt.values.back().push_back(r ? Get(*r, "jtt_ms") / 1000 : NAN);
      loc.values.back().push_back(r ? Get(*r, "vps_locality_rate") : NAN);
    }
  }
  s.charts.push_back({"jtt", "Figs. 4-5: job completion time per batch", svg::Render(jtt)});
  s.charts.push_back({"jtt-cdf", "Fig. 4: JTT CDF per scheduler and batch", svg::Render(JttCdf(runs, "probabilistic: JTT CDF", true))});
  s.charts.push_back({"locality", "Fig. 7, Table III: node-local map tasks", svg::Render(loc)});
  std::vector<std::vector<std::string>> rows;
  double reduction = 0, loc_gap = INFINITY, reduce_gap = INFINITY;
  int n = 0;
  for (const std::string& b : batches) {
    const Json* p = Find(runs, "Probabilistic", b);
    const Json* f = Find(runs, "Fair", b);
    if (!p || !f) continue;
    const double red = 1 - Get(*p, "jtt_ms") / Get(*f, "jtt_ms");
    reduction += red, ++n;
    loc_gap = std::min(loc_gap, Get(*p, "vps_locality_rate") - Get(*f, "vps_locality_rate"));
    reduce_gap = std::min(reduce_gap, ShuffleShare(*p, "node") - ShuffleShare(*f, "node"));
    const auto maps = [](const Json& r) {
      return Fmt(Get(r, "maps_node_local") / Get(r, "maps_total"), 3) + " / " +
             Fmt(Get(r, "maps_rack_local") / Get(r, "maps_total"), 3);
    };
    const auto reduces = [](const Json& r) {
      return Fmt(ShuffleShare(r, "node"), 3) + " / " + Fmt(ShuffleShare(r, "rack"), 3);
    };
    rows.push_back({b, Fmt(Get(*p, "jtt_ms") / 1000, 1), Fmt(Get(*f, "jtt_ms") / 1000, 1), Fmt(100 * red, 1) + " %",
                    maps(*p), maps(*f), reduces(*p), reduces(*f),
                    Fmt(Get(*p, "reduce_run_ms") / 1000, 1), Fmt(Get(*f, "reduce_run_ms") / 1000, 1)});
  }
  s.table = Table({"batch", "Prob. JTT s", "Fair JTT s", "JTT reduction", "Prob. maps node / rack",
                   "Fair maps node / rack", "Prob. reduce input node / rack", "Fair reduce input node / rack",
                   "Prob. reduce s", "Fair reduce s"}, rows);
  if (n == 0) return s;
  reduction /= n;
  s.claims.push_back({"Shen §III-A, Figs. 4-5",
                      "On average, the probabilistic network-aware scheduling method decreases the job processing "
                      "time by 17 percent and 46 percent compared with the coupling scheduling and fair scheduling, "
                      "respectively.",
                      Verdict(reduction >= 0.3, reduction > 0),
                      "mean JTT reduction over Fair, averaged over the three batches: " + Fmt(100 * reduction, 1) + " %"});
  s.claims.push_back({"Shen §III-C, Table III and Fig. 7",
                      "although the fair scheduling method tries to delay map tasks in order to execute them in the "
                      "data nodes, both our method and the coupling scheduling method achieve higher percentage of "
                      "local tasks than it.",
                      Verdict(loc_gap > 0, false),
                      "smallest node-locality lead of Probabilistic over Fair across batches: " + Fmt(loc_gap, 3)});
  // Reduces: "the fair scheduling method randomly assigns reduce tasks to
  // slots, while our method tries to assign both map tasks and reduce tasks
  // to nodes that lead to low transmission costs". Reproduced: a lead of at
  // least one point of node-local reduce input in every batch.
  s.claims.push_back({"Shen §III-C, Table III (reduces)",
                      "the fair scheduling method randomly assigns reduce tasks to slots, while our method tries to "
                      "assign both map tasks and reduce tasks to nodes that lead to low transmission costs",
                      Verdict(reduce_gap >= 0.01, reduce_gap > 0),
                      "smallest lead of Probabilistic over Fair in node-local reduce input across batches: " +
                          Fmt(reduce_gap, 4)});
  return s;
}

std::optional<Section> ScaleSection(const Runs& runs) {
  Section s;
  s.title = "Simulator performance: 500 nodes, 100,000 tasks (issue 5 target)";
  std::vector<std::vector<std::string>> rows;
  bool timed = true, all_met = true, sim_met = true;
  for (const Json* r : runs) {
    const double wall = Get(*r, "wall_ms") / 1000, policy = Get(*r, "policy_ms") / 1000;
    timed = timed && !std::isnan(wall);
    all_met = all_met && wall <= 10;
    sim_met = sim_met && wall - policy <= 10;
    rows.push_back({(*r)["label"], Fmt(Get(*r, "maps_total") + Get(*r, "reduces_done"), 0), Fmt(wall, 2),
                    Fmt(policy, 2), Fmt(wall - policy, 2), Fmt(Get(*r, "decisions_per_s"), 0)});
  }
  s.table = Table({"policy", "tasks", "wall s", "in the policy s", "simulator s", "decisions/s"}, rows);
  s.claims.push_back({"Issue 5, performance target", "Fast: 500 nodes and 100,000 tasks in ≤ 10 s on one core of this machine.",
                      !timed ? "not" : Verdict(all_met, sim_met),
                      !timed ? "not measured: run with --timing"
                             : std::string("every policy within 10 s: ") + (all_met ? "yes" : "no") +
                                   "; the simulator's own share within 10 s for every policy: " + (sim_met ? "yes" : "no")});
  return s;
}

}  // namespace mr::sim
