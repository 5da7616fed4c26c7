// JSON documents through nlohmann/json, kept in document order
// (ordered_json): parse turns its errors into HComm's config errors that say
// where the text stops being JSON, and write lays a document out for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace hcomm::json {

// Arrays and objects nest at most this deep.
inline constexpr int kMaxDepth = 64;

// One JSON value. Throws Error(HCOMM_ERR_CONFIG, "line L, column C: ...")
// where the text stops being JSON, nests deeper than kMaxDepth or holds a
// number beyond a double's range.
nlohmann::ordered_json parse(std::string_view text);

// Indented by two spaces, one member of the document per line; below that,
// an array or object of scalars (or of arrays and objects of scalars) stays
// on one line, so that a matrix reads as rows and a record as one line.
// Numbers that are not finite are written as null.
std::string write(const nlohmann::ordered_json& value);

}  // namespace hcomm::json
