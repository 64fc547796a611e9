#pragma once
// The signals meant for the program ceiling runs, and waiting for it to end. SIGINT, SIGTERM
// and SIGHUP reach every process the program started (grandchildren, and orphans re-parented
// to ceiling as their subreaper): sent to ceiling by kill(1) they are forwarded to all of
// them; sent by the terminal to its foreground process group, the processes in that group
// have them already and only those that left it get them. A second one kills them all
// (SIGKILL): from the terminal (a second Ctrl-C) at once, sent by kill(1) once the first has
// had `stop_grace_s` to work (a supervisor's duplicate is not taken for insistence). A child
// stopped by a signal is said on stderr, not waited for in silence.

#include <sys/types.h>

#include <optional>

namespace ceiling::measure {

inline constexpr double stop_grace_s = 2.0;

// Catches SIGINT, SIGTERM and SIGHUP for the life of the object (one at a time): ceiling
// itself keeps running, to reap the program and write a record marked partial.
class SignalForwarding {
  public:
    SignalForwarding();
    ~SignalForwarding();
    SignalForwarding(const SignalForwarding&) = delete;
    SignalForwarding& operator=(const SignalForwarding&) = delete;
    // The first signal received, if any (SIGINT, SIGTERM, SIGHUP).
    std::optional<int> received() const;
};

// Blocks until `pid`, a child of ceiling, has exited, leaving it unreaped (its /proc/PID/io
// is still readable). Meanwhile acts on what a SignalForwarding caught, as said above, and
// says when the child is stopped (SIGSTOP, SIGTSTP). False on an error of waitid.
bool wait_for_exit(pid_t pid);

}  // namespace ceiling::measure
