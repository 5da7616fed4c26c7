# Doxygen's input filter for HComm's public headers (the `docs` target): the
# headers' plain comments become documentation, without a special comment
# style in the headers themselves. Every line keeps its number.
#
# The comment that opens a file documents the file.
1s|^/\* \(.*\) \*/$|/** \1 \\file */|
1s|^/\* \(.*[^/]\)$|/** \1 \\file|
1s|^// \(.*\)$|/// \1 \\file|
1b
# A comment on lines of its own documents the declaration below it.
s|^\([ \t]*\)/\* |\1/** |
s|^\([ \t]*\)/\*$|\1/**|
s|^\([ \t]*\)// |\1/// |
# A comment after a declaration, on its line, documents that declaration
# (not after a preprocessor line or a closing brace).
/^[ \t]*[#}]/b
s|\([^ \t/*]\)\([ \t]*\)/\* |\1\2/**< |
s|\([^ \t/*]\)\([ \t]\+\)// |\1\2///< |
# In comments, <name> is text, not an HTML tag, and #if is code, not a link.
s/\([_ ]\)<\([a-z_]*\)>\([_. ]\)/\1\\<\2\\>\3/g
s|^\([ \t]*\*[ \t]*\)#|\1\\#|
