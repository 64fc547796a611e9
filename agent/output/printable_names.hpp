#pragma once
// Names a program or a shared record chose (regions, processes, the command), shown in text
// on a terminal: a control character in one (ESC, NUL, a newline) is written as an escape,
// so a name can neither move the cursor, recolour the screen nor forge a line of ceiling's
// own. JSON, CSV and the record keep them exact; HTML escapes its own way.

#include <optional>
#include <string>
#include <string_view>

#include "diagnosis/run_record.hpp"

namespace ceiling::output {

// `text` with control characters (C0, DEL, U+0080-U+009F) escaped: \n, \r, \t, else \xHH.
std::string escaped(std::string_view text);

// Where a name in `record` holds a control character, a copy with every such name escaped,
// and what refers to them (region budgets, the model region), to be judged again before it is
// shown; nullopt where none does (the common case: no copy).
std::optional<RunRecord> with_printable_names(const RunRecord& record);

}  // namespace ceiling::output
