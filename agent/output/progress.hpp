#pragma once
// Progress for long work, on stderr and only when stderr is a terminal (never in logs or
// pipes): "[ 12/40] measuring read 1 thread 256 KiB", rewritten in place.

#include <chrono>
#include <string>

namespace ceiling::output {

class Progress {
public:
    Progress(std::string title, int total, bool enabled);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    void step(const std::string& what);  // advances by one and shows what is running
    void add_total(int more) { total_ += more; }

private:
    std::string title_;
    int total_;
    int done_ = 0;
    bool enabled_;
    std::chrono::steady_clock::time_point last_{};
};

// True when progress should be drawn: stderr is a terminal and not quiet.
bool progress_wanted(bool quiet);

}  // namespace ceiling::output
