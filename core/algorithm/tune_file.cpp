#include "core/algorithm/tune_file.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/common/error.hpp"

namespace hcomm::algorithm {

namespace {

// Each key's setter returns null, or why the value is wrong.
using Setter = const char* (*)(TuneFile& file, const std::string& value);

struct Key {
  const char* name;
  bool required;
  Setter set;
};

const char* time_value(const std::string& text, double* out) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0)
    return "not a finite number >= 0";
  *out = v;
  return nullptr;
}

const char* optional_time(const std::string& text, std::optional<double>* out) {
  double v = 0;
  const char* why = time_value(text, &v);
  if (!why) *out = v;
  return why;
}

template <int TuneFile::*count>
const char* set_count(TuneFile& f, const std::string& v) {
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), f.*count);
  return v.empty() || ec != std::errc() || end != v.data() + v.size() || f.*count < 1 ? "not a whole number >= 1" : nullptr;
}

template <LinkFields TuneFile::*group, std::optional<double> LinkFields::*field>
const char* set_field(TuneFile& f, const std::string& v) {
  return optional_time(v, &(f.*group.*field));
}

// The optional link models, as key prefixes.
struct Group {
  const char* prefix;
  LinkFields TuneFile::*fields;
};
constexpr Group kGroups[] = {{"mapped", &TuneFile::mapped}, {"intra", &TuneFile::intra}, {"inter", &TuneFile::inter}};

#define HCOMM_LINK_FIELD_KEYS(group)                                                                  \
  {#group ".alpha_us", false, set_field<&TuneFile::group, &LinkFields::alpha_us>},                   \
      {#group ".beta_us_per_byte", false, set_field<&TuneFile::group, &LinkFields::beta_us_per_byte>}, \
      {#group ".gamma_us_per_byte", false, set_field<&TuneFile::group, &LinkFields::gamma_us_per_byte>}

constexpr Key kKeys[] = {
    {"ranks", false, set_count<&TuneFile::ranks>},
    {"hosts", false, set_count<&TuneFile::hosts>},
    {"transports", false,
     [](TuneFile& f, const std::string& v) -> const char* {
       f.transports = v;
       return v.empty() ? "empty" : nullptr;
     }},
    {"alpha_us", true, [](TuneFile& f, const std::string& v) { return time_value(v, &f.link.alpha_us); }},
    {"beta_us_per_byte", true,
     [](TuneFile& f, const std::string& v) { return time_value(v, &f.link.beta_us_per_byte); }},
    {"gamma_us_per_byte", true,
     [](TuneFile& f, const std::string& v) { return time_value(v, &f.link.gamma_us_per_byte); }},
    HCOMM_LINK_FIELD_KEYS(mapped),
    HCOMM_LINK_FIELD_KEYS(intra),
    HCOMM_LINK_FIELD_KEYS(inter),
};
#undef HCOMM_LINK_FIELD_KEYS

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// The key that may repeat: one measured choice per line.
constexpr const char* kSelectKey = "select";

std::string key_names() {
  std::string out;
  for (const Key& k : kKeys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out + ", " + kSelectKey;
}

TuneRule select_rule(const std::string& value, const std::string& path, int line) {
  std::vector<TuneRule> rules;
  try {
    rules = parse_tune(value);
  } catch (const Error& e) {
    HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE_FILE %s line %d: key '%s': %s", path.c_str(), line, kSelectKey, e.what());
  }
  if (rules.size() != 1 || !rules[0].profile.empty())
    HCOMM_THROW(HCOMM_ERR_CONFIG,
                "HCOMM_TUNE_FILE %s line %d: key '%s': '%s' is not one rule; each select line holds one, "
                "<collective>:[<min>-<max>:]@<algorithm>",
                path.c_str(), line, kSelectKey, value.c_str());
  rules[0].file = path;
  rules[0].mem_kinds = HCOMM_MEM_HOST;
  return rules[0];
}

// Shortest text that reads back as the same double, whatever the locale.
std::string number_text(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "nan";
}

void overlay(hcomm_link_model_t& link, const LinkFields& fields) {
  if (fields.alpha_us) link.alpha_us = *fields.alpha_us;
  if (fields.beta_us_per_byte) link.beta_us_per_byte = *fields.beta_us_per_byte;
  if (fields.gamma_us_per_byte) link.gamma_us_per_byte = *fields.gamma_us_per_byte;
}

}  // namespace

TuneFile parse_tune_file(const std::string& text, const std::string& path) {
  TuneFile file;
  std::map<std::string, int> seen;  // key -> line
  std::istringstream in(text);
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    const std::string content = trim(raw.substr(0, raw.find('#')));
    if (content.empty()) continue;
    const size_t eq = content.find('=');
    if (eq == std::string::npos)
      HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE_FILE %s line %d: '%s' is not 'key = value'", path.c_str(), line,
                  content.c_str());
    const std::string key = trim(content.substr(0, eq)), value = trim(content.substr(eq + 1));
    if (key == kSelectKey) {
      file.select.push_back(select_rule(value, path, line));
      continue;
    }
    const Key* spec = nullptr;
    for (const Key& k : kKeys)
      if (key == k.name) spec = &k;
    if (!spec)
      HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE_FILE %s line %d: unknown key '%s' (the keys: %s)", path.c_str(), line,
                  key.c_str(), key_names().c_str());
    if (auto [it, fresh] = seen.emplace(key, line); !fresh)
      HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE_FILE %s line %d: key '%s' appears again (first on line %d)",
                  path.c_str(), line, key.c_str(), it->second);
    if (const char* why = spec->set(file, value))
      HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE_FILE %s line %d: key '%s': '%s' is %s", path.c_str(), line, key.c_str(),
                  value.c_str(), why);
  }
  for (const Key& k : kKeys)
    if (k.required && !seen.count(k.name))
      HCOMM_THROW(HCOMM_ERR_CONFIG,
                  "HCOMM_TUNE_FILE %s: key '%s' is missing (hcomm-perf --calibrate writes a complete file)",
                  path.c_str(), k.name);
  return file;
}

TuneFile read_tune_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE_FILE %s: not a file (hcomm-perf --calibrate FILE writes one)",
                path.c_str());
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.is_open() || in.bad())
    HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE_FILE %s: cannot read it: %s", path.c_str(), std::strerror(errno));
  return parse_tune_file(text.str(), path);
}

std::string format_tune_file(const TuneFile& file) {
  std::string out =
      "# HComm tune file (HCOMM_TUNE_FILE): the link model of the algorithms' cost functions.\n"
      "# alpha_us: per message (one hop); beta_us_per_byte: per byte moved; gamma_us_per_byte:\n"
      "# per byte reduced, over the slowest link; mapped.*: the same through mapped memory\n"
      "# (ranks of one host); intra.*, inter.*: within a host and between hosts.\n";
  auto line = [&](const char* key, const std::string& value) { out += std::string(key) + " = " + value + "\n"; };
  if (file.ranks > 0) line("ranks", std::to_string(file.ranks));
  if (file.hosts > 0) line("hosts", std::to_string(file.hosts));
  if (!file.transports.empty()) line("transports", file.transports);
  line("alpha_us", number_text(file.link.alpha_us));
  line("beta_us_per_byte", number_text(file.link.beta_us_per_byte));
  line("gamma_us_per_byte", number_text(file.link.gamma_us_per_byte));
  for (const Group& g : kGroups) {
    const LinkFields& fields = file.*g.fields;
    auto field = [&](const char* name, const std::optional<double>& v) {
      if (v) line((std::string(g.prefix) + "." + name).c_str(), number_text(*v));
    };
    field("alpha_us", fields.alpha_us);
    field("beta_us_per_byte", fields.beta_us_per_byte);
    field("gamma_us_per_byte", fields.gamma_us_per_byte);
  }
  if (!file.select.empty())
    out +=
        "# select: the algorithm measured fastest for host memory from each message size on, taken\n"
        "# before the cost model by communicators of the ranks, hosts and transports above.\n";
  for (const TuneRule& r : file.select) line(kSelectKey, r.text());
  return out;
}

hcomm_comm_view_t apply_tune_file(const TuneFile& file, const hcomm_comm_view_t& measured) {
  hcomm_comm_view_t view = measured;
  view.link = file.link;
  if (view.flags & HCOMM_VIEW_MAPPED) overlay(view.mapped, file.mapped);
  if (view.nnodes > 1) {
    overlay(view.intra, file.intra);
    overlay(view.inter, file.inter);
  } else {
    view.intra = view.inter = view.link;
  }
  return view;
}

bool select_applies(const TuneFile& file, int nranks, int nhosts, const std::string& transports, std::string* why) {
  if (file.ranks > 0 && file.ranks != nranks)
    *why = format("measured on %d ranks, this communicator has %d", file.ranks, nranks);
  else if (file.hosts > 0 && file.hosts != nhosts)
    *why = format("measured across %d hosts, this communicator spans %d", file.hosts, nhosts);
  else if (!file.transports.empty() && file.transports != transports)
    *why = "measured over transports " + file.transports + ", this communicator's are " + transports;
  else
    return true;
  return false;
}

}  // namespace hcomm::algorithm
