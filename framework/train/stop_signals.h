// Stop requests by signal: the first SIGINT / SIGTERM / SIGHUP / SIGUSR1 asks `luong train` to finish the current
// step, save a checkpoint and return; asking again stops the process at once.
#pragma once

namespace luong {

// The first stop signal sets the request (a note on stderr says so); a second one ends the process at once
// with status 128 + signal (the last checkpoint written stays intact: saves are atomic). A second signal
// from another process within a few seconds of the first is the same request arriving by another route,
// not a second request, and is ignored with a note: a scheduler signals every process of a job (mpirun and
// launch/mpirun-luong included) and mpirun relays what it receives, so each rank can get one stop twice.
// SIGUSR1 is a stop request too: launch/mpirun-luong relays a Ctrl-C as SIGUSR1 (mpirun forwards it to every
// rank without tearing the job down), and a batch system can send it ahead of a time limit.
// SIGHUP (the terminal of an ssh session closed) stops with a checkpoint instead of killing the run. SIGINT
// and SIGHUP that were ignored when the process started (nohup, a script's `&`) stay ignored.
// `notes`: print the notes on stderr (under mpirun, rank 0 alone does).
void install_stop_signal_handlers(bool notes = true);
// Once the run has ended (its checkpoint saved), a stop signal has nothing left to stop: notes off, so a
// signal that reaches a process on its way out (mpirun ending the job) does not print "stopping now".
void silence_stop_signal_notes();
bool stop_requested();
// The signal that asked to stop (SIGINT, SIGTERM, SIGHUP, SIGUSR1), or 0.
int stop_signal();

// Seconds within which a second stop signal from another sender counts as a copy of the first.
inline constexpr int kRelayedSignalWindowSeconds = 3;

}  // namespace luong
