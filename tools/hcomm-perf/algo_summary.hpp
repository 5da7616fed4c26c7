// The figures hcomm-perf --sweep-algos ends with: at how many sizes the
// library's own choice (auto) comes within 10% of the best algorithm forced,
// measured as auto and as the chosen algorithm's own forced time (the same
// schedules: apart, the two differ only by the machine's noise), auto's
// total time against one algorithm's (ring) forced at every size, and the
// best forced algorithm's at each size against the same total (what no
// choice of algorithm can beat in the sweep); the order in which its rounds
// run the contenders; and the choices --calibrate --select makes from such
// sweeps. Header-only and free of library calls, so that it is unit-tested
// on its own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hcomm::perf {

// The contender a sweep's round runs k-th. Odd rounds take them in reverse
// order, so that none always runs last or after the same one, starting
// half-way along, so that no contender's rounds run back to back (where a
// slow spell of the machine would cover both).
inline size_t contender_at(int round, size_t k, size_t contenders) {
  return round % 2 ? (contenders + contenders / 2 - 1 - k) % contenders : k;
}

// One size: each algorithm's time forced (none where it does not serve the
// size), in the order of the table's columns, and auto's time.
struct AlgoTimes {
  std::vector<std::optional<double>> forced_us;
  double auto_us;
  std::optional<size_t> chosen = std::nullopt;  // auto's algorithm among the columns
};

// Auto is "close" at a size where it took at most this times the best forced time.
inline constexpr double kCloseFactor = 1.10;

struct AlgoSummary {
  int sizes = 0;            // sizes where some algorithm ran forced
  int auto_close = 0;       // of those, the sizes where auto was close to the best
  int choice_close = 0;     // ... where the chosen algorithm's forced time was (auto's without one)
  int reference_sizes = 0;  // sizes the reference algorithm served
  // sum(auto) / sum(reference) - 1 over those sizes, in percent; none where
  // the reference served no size.
  std::optional<double> vs_reference_percent;
  // The same with the best forced time at each size in auto's place.
  std::optional<double> best_vs_reference_percent;
};

// `names`: the algorithms of the forced columns; auto's total is compared
// with `reference`'s where it is one of them.
inline AlgoSummary summarize(const std::vector<AlgoTimes>& sizes, const std::vector<std::string>& names,
                             std::string_view reference) {
  AlgoSummary s;
  const size_t ref = static_cast<size_t>(std::find(names.begin(), names.end(), reference) - names.begin());
  double auto_sum = 0, best_sum = 0, reference_sum = 0;
  for (const AlgoTimes& t : sizes) {
    std::optional<double> best;
    for (const std::optional<double>& f : t.forced_us)
      if (f && (!best || *f < *best)) best = f;
    if (best) {
      ++s.sizes;
      s.auto_close += t.auto_us <= *best * kCloseFactor;
      const bool chosen_forced = t.chosen && *t.chosen < t.forced_us.size() && t.forced_us[*t.chosen];
      s.choice_close += (chosen_forced ? *t.forced_us[*t.chosen] : t.auto_us) <= *best * kCloseFactor;
    }
    if (ref < names.size() && t.forced_us.at(ref)) {
      ++s.reference_sizes;
      auto_sum += t.auto_us;
      best_sum += *best;
      reference_sum += *t.forced_us[ref];
    }
  }
  if (s.reference_sizes > 0 && reference_sum > 0) {
    s.vs_reference_percent = (auto_sum / reference_sum - 1) * 100;
    s.best_vs_reference_percent = (best_sum / reference_sum - 1) * 100;
  }
  return s;
}

// The closing lines of the table, e.g.
//   # auto within 10% of the best forced algorithm at 11 of 12 sizes
//   # auto's choice, forced, within 10% of the best forced algorithm at 12 of 12 sizes
//   # auto against ring forced: sum(auto) / sum(ring) - 1 = -3.2% over the 12 sizes ring serves
//   # the best forced algorithm at each of those sizes against ring: -4.0%
inline std::string summary_text(const AlgoSummary& s, std::string_view reference) {
  char line[256];
  std::string out;
  std::snprintf(line, sizeof line, "# auto within %.0f%% of the best forced algorithm at %d of %d sizes\n",
                (kCloseFactor - 1) * 100, s.auto_close, s.sizes);
  out += line;
  std::snprintf(line, sizeof line,
                "# auto's choice, forced, within %.0f%% of the best forced algorithm at %d of %d sizes\n",
                (kCloseFactor - 1) * 100, s.choice_close, s.sizes);
  out += line;
  const std::string ref(reference);
  if (s.vs_reference_percent)
    std::snprintf(line, sizeof line,
                  "# auto against %s forced: sum(auto) / sum(%s) - 1 = %+.1f%% over the %d sizes %s serves\n",
                  ref.c_str(), ref.c_str(), *s.vs_reference_percent, s.reference_sizes, ref.c_str());
  else
    std::snprintf(line, sizeof line, "# auto against %s forced: %s serves no size of this sweep\n", ref.c_str(),
                  ref.c_str());
  out += line;
  if (s.best_vs_reference_percent) {
    std::snprintf(line, sizeof line, "# the best forced algorithm at each of those sizes against %s: %+.1f%%\n",
                  ref.c_str(), *s.best_vs_reference_percent);
    out += line;
  }
  return out;
}

// Calibration keeps the library's own choice at a size where it comes within
// this factor of the best measured one: the machine's noise alone moves
// times that much between rounds.
inline constexpr double kKeepFactor = 1.03;

// Each algorithm's time against the best of its sweep, in its worst sweep,
// from sweeps of the same sizes and algorithms with different buffers (each
// the paths of its own kind); none where it did not run in every sweep.
inline std::vector<std::optional<double>> worst_ratios(const std::vector<AlgoTimes>& sweeps) {
  const size_t n = sweeps.empty() ? 0 : sweeps.front().forced_us.size();
  std::vector<std::optional<double>> worst(n, 1.0);
  for (const AlgoTimes& t : sweeps) {
    std::optional<double> best;
    for (size_t i = 0; i < n && i < t.forced_us.size(); ++i)
      if (t.forced_us[i] && (!best || *t.forced_us[i] < *best)) best = t.forced_us[i];
    for (size_t i = 0; i < n; ++i) {
      const bool ran = i < t.forced_us.size() && t.forced_us[i];
      if (!ran || !worst[i]) {
        worst[i] = std::nullopt;
        continue;
      }
      worst[i] = std::max(*worst[i], *best > 0 ? *t.forced_us[i] / *best : 1.0);
    }
  }
  return worst;
}

// The algorithm --select takes at one size: the least behind in its worst
// sweep (worst_ratios); auto's where that comes within kKeepFactor of it.
// None where no algorithm ran in every sweep.
inline std::optional<size_t> fastest_choice(const std::vector<AlgoTimes>& sweeps) {
  const std::vector<std::optional<double>> worst = worst_ratios(sweeps);
  std::optional<size_t> pick;
  for (size_t i = 0; i < worst.size(); ++i)
    if (worst[i] && (!pick || *worst[i] < *worst[*pick])) pick = i;
  const std::optional<size_t> own = sweeps.empty() ? std::nullopt : sweeps.front().chosen;
  if (pick && own && *own < worst.size() && worst[*own] && *worst[*own] <= *worst[*pick] * kKeepFactor) return own;
  return pick;
}

// The sizes whose winner differs from both neighbours', which agree: an
// algorithm's time changes smoothly with the size, so such a lone winner is
// more likely the machine's noise than a regime of its own.
inline std::vector<size_t> lone_winners(const std::vector<std::optional<size_t>>& choices) {
  std::vector<size_t> out;
  for (size_t i = 1; i + 1 < choices.size(); ++i)
    if (choices[i - 1] && choices[i - 1] == choices[i + 1] && choices[i - 1] != choices[i]) out.push_back(i);
  return out;
}

// The choices at consecutive sizes (`sweeps[size]`: that size's sweeps), a
// lone winner given to its neighbours' where theirs comes within
// kCloseFactor of it there.
inline std::vector<std::optional<size_t>> smoothed_choices(const std::vector<std::vector<AlgoTimes>>& sweeps) {
  std::vector<std::optional<size_t>> choices;
  for (const std::vector<AlgoTimes>& at : sweeps) choices.push_back(fastest_choice(at));
  for (size_t i : lone_winners(choices)) {
    const size_t around = *choices[i - 1];
    const std::vector<std::optional<double>> worst = worst_ratios(sweeps[i]);
    if (around < worst.size() && worst[around] && *worst[around] <= kCloseFactor) choices[i] = around;
  }
  return choices;
}

// A size measured again: each contender keeps its better time.
inline void keep_best(AlgoTimes& into, const AlgoTimes& again) {
  for (size_t i = 0; i < into.forced_us.size() && i < again.forced_us.size(); ++i)
    if (again.forced_us[i] && (!into.forced_us[i] || *again.forced_us[i] < *into.forced_us[i]))
      into.forced_us[i] = again.forced_us[i];
  into.auto_us = std::min(into.auto_us, again.auto_us);
}

// One measured choice over message sizes [lo, hi); hi 0: no end.
struct ChoiceRange {
  uint64_t lo, hi;
  size_t choice;
};

// Ranges of the choices at sizes `starts` (ascending): a size's choice
// holds from it (the first from 0) to the next size with another; sizes
// without one start a gap.
inline std::vector<ChoiceRange> choice_ranges(const std::vector<uint64_t>& starts,
                                              const std::vector<std::optional<size_t>>& choices) {
  std::vector<ChoiceRange> out;
  for (size_t i = 0; i < starts.size() && i < choices.size(); ++i) {
    const bool continues = i > 0 && choices[i - 1] == choices[i];
    if (!continues && !out.empty() && out.back().hi == 0) out.back().hi = starts[i];
    if (choices[i] && !continues) out.push_back({i == 0 ? 0 : starts[i], 0, *choices[i]});
  }
  return out;
}

}  // namespace hcomm::perf
