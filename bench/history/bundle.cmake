# Concatenates the charting libraries' minified UMD builds (PARTS, separated by commas) into one
# script (OUT).
string(REPLACE "," ";" PARTS "${PARTS}")
file(WRITE ${OUT} "")
foreach(part IN LISTS PARTS)
  file(READ ${part} text)
  file(APPEND ${OUT} "${text}\n;\n")
endforeach()
