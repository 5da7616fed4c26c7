// Point to point in matching mode any (group "matching"), on a communicator
// split off the job's with hcomm_config_t.p2p_matching: wildcard receives
// from every rank (itself included) checked for MPI's order (no message
// overtakes another of its sender, whatever the tags), with the messages
// waiting for receives posted first or arriving first, beside collectives on
// the same communicator; receives of specific and wildcard sources and tags
// mixed; probes and matched probes, with receives of the probed size; cancel;
// truncation; synchronous sends; splits inheriting the mode; and the errors
// of exact mode. Messages of the small counts, of 4 KiB and more (which
// follow their envelope as a second message) and of the large count; every
// element checked, and the room past a message left untouched.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "groups.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::test {
namespace {

constexpr int32_t kCanary = 0x5A5A5A5A;

// Element i of the message `seq` from `from` to `to` with `tag`.
int32_t value(int from, int to, int tag, int seq, size_t i) {
  uint32_t x = static_cast<uint32_t>(from) * 0x9E3779B1u + static_cast<uint32_t>(to) * 0x85EBCA77u +
               static_cast<uint32_t>(tag) * 0xC2B2AE3Du + static_cast<uint32_t>(seq) * 0x27D4EB2Fu +
               static_cast<uint32_t>(i) * 0x165667B1u;
  return static_cast<int32_t>(x ^ (x >> 15));
}

std::vector<int32_t> message(int from, int to, int tag, int seq, size_t count) {
  std::vector<int32_t> m(count);
  for (size_t i = 0; i < count; ++i) m[i] = value(from, to, tag, seq, i);
  return m;
}

// Room for a receive between two guard elements, all canaries at first.
struct Inbox {
  explicit Inbox(size_t room) : slots(room + 2, kCanary) {}
  int32_t* data() { return slots.data() + 1; }
  size_t room() const { return slots.size() - 2; }
  // "" when the first `count` elements hold the message and the rest of the
  // room and the guards are untouched.
  std::string check(int from, int to, int tag, int seq, size_t count) const {
    for (size_t i = 0; i < slots.size(); ++i) {
      const bool in = i >= 1 && i <= count;
      const int32_t want = in ? value(from, to, tag, seq, i - 1) : kCanary;
      if (slots[i] != want)
        return (in ? "element " + std::to_string(i - 1) : "untouched element " + std::to_string(i - 1)) + " is " +
               std::to_string(slots[i]) + ", expected " + std::to_string(want);
    }
    return "";
  }
  std::vector<int32_t> slots;
  hcomm_request_t request = nullptr;
  hcomm_status_t status{};
};

std::string describe(const hcomm_status_t& s) {
  return "source " + std::to_string(s.source) + ", tag " + std::to_string(s.tag) + ", " + std::to_string(s.bytes) +
         " bytes, cancelled " + std::to_string(s.cancelled);
}

class Matching {
 public:
  Matching(Job& job, hcomm_comm_t comm) : job_(job), comm_(comm), me_(job.ranks.rank), n_(job.ranks.size) {}

  // Every rank sends kPerPeer messages of `count` elements to every rank,
  // with tags that differ and repeat; each rank takes them all with
  // HCOMM_ANY_SOURCE and HCOMM_ANY_TAG. Receives are posted first, or (`late`)
  // after the messages were sent and an allreduce on the same communicator
  // completed. Of each sender, the k-th receive (in posting order) that got
  // its messages must hold its k-th message.
  void wildcards(size_t count, bool late) {
    constexpr int kPerPeer = 3;
    const std::string what = "wildcard receives of " + std::to_string(count) + " elements" +
                             (late ? " posted after the messages came" : " posted first");
    std::vector<Inbox> in(static_cast<size_t>(kPerPeer) * n_, Inbox(count + 3));
    std::vector<std::vector<int32_t>> out;
    std::vector<hcomm_request_t> sends;
    auto post_receives = [&] {
      for (Inbox& box : in)
        job_.check(
            hcomm_irecv(box.data(), box.room(), HCOMM_INT32, HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, comm_, &box.request),
            what + ": hcomm_irecv");
    };
    if (!late) post_receives();
    for (int seq = 0; seq < kPerPeer; ++seq)
      for (int p = 0; p < n_; ++p) {
        const int to = (me_ + p) % n_;
        out.push_back(message(me_, to, tag_of(me_, to, seq), seq, count));
        sends.emplace_back();
        job_.check(hcomm_isend(out.back().data(), count, HCOMM_INT32, to, tag_of(me_, to, seq), comm_, &sends.back()),
                   what + ": hcomm_isend");
      }
    if (late) {
      allreduce_check(what);
      post_receives();
    }
    for (size_t i = in.size(); i-- > 0;)
      job_.check(hcomm_wait_status(in[i].request, &in[i].status), what + ": hcomm_wait_status");
    for (hcomm_request_t s : sends) job_.check(hcomm_wait(s), what + ": hcomm_wait of a send");
    std::vector<int> next(n_, 0);  // of each sender, its message the next receive must hold
    std::vector<int> got(n_, 0);
    for (size_t i = 0; i < in.size(); ++i) {
      const hcomm_status_t& s = in[i].status;
      if (s.source < 0 || s.source >= n_ || next[s.source] >= kPerPeer) {
        job_.fail(what + ": receive " + std::to_string(i) + " says " + describe(s));
        continue;
      }
      const int seq = next[s.source]++;
      ++got[s.source];
      expect(in[i], s.source, tag_of(s.source, me_, seq), seq, count, what + ", receive " + std::to_string(i));
    }
    job_.summary("matching: " + what);
  }

  // Many small messages from every rank to every rank, tags all over,
  // received one by one with blocking wildcard receives: each sender's
  // messages come in the order sent.
  void stream() {
    constexpr int kMessages = 100;
    std::vector<std::vector<int32_t>> out;
    std::vector<hcomm_request_t> sends;
    for (int seq = 0; seq < kMessages; ++seq)
      for (int to = 0; to < n_; ++to) {
        const int tag = (seq * 7 + to) % 5;
        out.push_back(message(me_, to, tag, seq, static_cast<size_t>(seq % 9)));
        sends.emplace_back();
        job_.check(hcomm_isend(out.back().data(), out.back().size(), HCOMM_INT32, to, tag, comm_, &sends.back()),
                   "stream: hcomm_isend");
      }
    std::vector<int> next(n_, 0);
    for (int i = 0; i < kMessages * n_; ++i) {
      Inbox box(9);
      job_.check(hcomm_recv_status(box.data(), box.room(), HCOMM_INT32, HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, comm_, nullptr,
                                   &box.status),
                 "stream: hcomm_recv_status");
      const int from = box.status.source;
      if (from < 0 || from >= n_ || next[from] >= kMessages) {
        job_.fail("stream: receive " + std::to_string(i) + " says " + describe(box.status));
        continue;
      }
      const int seq = next[from]++;
      expect(box, from, (seq * 7 + me_) % 5, seq, static_cast<size_t>(seq % 9),
             "stream, message " + std::to_string(seq) + " from rank " + std::to_string(from));
    }
    for (hcomm_request_t s : sends) job_.check(hcomm_wait(s), "stream: hcomm_wait of a send");
    job_.summary("matching: " + std::to_string(kMessages) +
                 " messages from every rank in tags all over, each sender's in order");
  }

  // To the next rank, tags 1, 2, 1, 2; the previous rank's messages are
  // taken by receives of (prev, tag 2), (any, any), (prev, any), (any,
  // tag 2), which MPI's order gives messages 1, 0, 2, 3 whenever they come.
  void mixed(size_t count) {
    const int next = (me_ + 1) % n_, prev = (me_ + n_ - 1) % n_;
    const std::string what = "specific and wildcard receives mixed, " + std::to_string(count) + " elements";
    const int tags[] = {1, 2, 1, 2};
    struct Want {
      int source, tag, seq;
    };
    const Want wants[] = {
        {prev, 2, 1}, {HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, 0}, {prev, HCOMM_ANY_TAG, 2}, {HCOMM_ANY_SOURCE, 2, 3}};
    std::vector<Inbox> in(4, Inbox(count));
    for (int k = 0; k < 4; ++k)
      job_.check(hcomm_irecv(in[k].data(), count, HCOMM_INT32, wants[k].source, wants[k].tag, comm_, &in[k].request),
                 what + ": hcomm_irecv");
    std::vector<std::vector<int32_t>> out;
    std::vector<hcomm_request_t> sends(4);
    for (int seq = 0; seq < 4; ++seq) {
      out.push_back(message(me_, next, tags[seq], seq, count));
      job_.check(hcomm_isend(out.back().data(), count, HCOMM_INT32, next, tags[seq], comm_, &sends[seq]),
                 what + ": hcomm_isend");
    }
    for (int k = 0; k < 4; ++k) {
      job_.check(hcomm_wait_status(in[k].request, &in[k].status), what + ": hcomm_wait_status");
      const int seq = wants[k].seq;
      expect(in[k], prev, tags[seq], seq, count, what + ", receive " + std::to_string(k));
    }
    for (hcomm_request_t s : sends) job_.check(hcomm_wait(s), what + ": hcomm_wait of a send");
    job_.summary("matching: " + what);
  }

  // To the next rank, messages of `count` + 13k elements with tags 30 + k:
  // hcomm_probe (any, any) tells each one's size before its receive of
  // exactly that room; hcomm_iprobe is polled for one; matched probes take
  // two of one tag, the second staying visible to probes.
  void probes(size_t count) {
    const int next = (me_ + 1) % n_, prev = (me_ + n_ - 1) % n_;
    const std::string what = "probes, " + std::to_string(count) + " elements";
    constexpr int kProbed = 3;
    std::vector<std::vector<int32_t>> out;
    std::vector<hcomm_request_t> sends;
    auto send = [&](int tag, int seq, size_t elements) {
      out.push_back(message(me_, next, tag, seq, elements));
      sends.emplace_back();
      job_.check(hcomm_isend(out.back().data(), elements, HCOMM_INT32, next, tag, comm_, &sends.back()),
                 what + ": hcomm_isend");
    };
    out.reserve(kProbed + 4);
    for (int k = 0; k < kProbed; ++k) send(30 + k, k, count + 13 * k);
    send(40, 0, count);
    send(41, 0, count + 1);
    send(41, 1, count + 2);
    send(42, 0, count + 3);
    for (int k = 0; k < kProbed; ++k) {
      hcomm_status_t s{};
      job_.check(hcomm_probe(HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, comm_, &s), what + ": hcomm_probe");
      // Rank prev's first message not yet received is the first that any
      // rank sent this one: only prev sends to it here.
      const size_t elements = count + 13 * k;
      if (s.source != prev || s.tag != 30 + k || s.bytes != elements * 4) {
        job_.fail(what + ": hcomm_probe " + std::to_string(k) + " says " + describe(s) + ", expected source " +
                  std::to_string(prev) + ", tag " + std::to_string(30 + k) + ", " + std::to_string(elements * 4) +
                  " bytes");
        return;
      }
      Inbox box(s.bytes / 4);
      job_.check(hcomm_recv_status(box.data(), box.room(), HCOMM_INT32, s.source, s.tag, comm_, nullptr, &box.status),
                 what + ": hcomm_recv_status of the probed message");
      expect(box, prev, 30 + k, k, elements, what + ", the probed message " + std::to_string(k));
    }
    int flag = 0, polls = 0;
    hcomm_status_t s{};
    while (!flag) {
      job_.check(hcomm_iprobe(prev, 40, comm_, &flag, &s), what + ": hcomm_iprobe");
      ++polls;
    }
    if (s.source != prev || s.tag != 40 || s.bytes != count * 4)
      job_.fail(what + ": hcomm_iprobe after " + std::to_string(polls) + " polls says " + describe(s));
    Inbox polled(count);
    job_.check(hcomm_recv(polled.data(), count, HCOMM_INT32, prev, 40, comm_, nullptr), what + ": hcomm_recv");
    expect_data(polled, prev, 40, 0, count, what + ", the polled message");

    // Matched probes: tag 41's first message, then its second, which a
    // probe still sees while the first is taken.
    hcomm_message_t first = nullptr, second = nullptr;
    job_.check(hcomm_mprobe(prev, 41, comm_, &first, &s), what + ": hcomm_mprobe");
    if (!first || s.bytes != (count + 1) * 4) job_.fail(what + ": hcomm_mprobe says " + describe(s));
    hcomm_status_t seen{};
    job_.check(hcomm_probe(prev, 41, comm_, &seen), what + ": hcomm_probe beside a matched probe");
    if (seen.bytes != (count + 2) * 4)
      job_.fail(what + ": hcomm_probe after a matched probe took the first message of tag 41 says " + describe(seen));
    flag = 0;
    while (!flag) job_.check(hcomm_improbe(prev, 41, comm_, &flag, &second, &s), what + ": hcomm_improbe");
    if (!second || s.bytes != (count + 2) * 4) job_.fail(what + ": hcomm_improbe says " + describe(s));
    Inbox a(count + 1), b(count + 5);
    job_.check(hcomm_imrecv(b.data(), b.room(), HCOMM_INT32, &second, &b.request), what + ": hcomm_imrecv");
    job_.check(hcomm_mrecv(a.data(), a.room(), HCOMM_INT32, &first, &a.status), what + ": hcomm_mrecv");
    job_.check(hcomm_wait_status(b.request, &b.status), what + ": hcomm_wait_status of hcomm_imrecv");
    if (first || second) job_.fail(what + ": hcomm_mrecv or hcomm_imrecv left *message set");
    expect(a, prev, 41, 0, count + 1, what + ", hcomm_mrecv");
    expect(b, prev, 41, 1, count + 2, what + ", hcomm_imrecv");
    // Nothing of tag 41 is left; tag 42's message is.
    job_.check(hcomm_improbe(prev, 41, comm_, &flag, &first, &s), what + ": hcomm_improbe of nothing");
    if (flag || first) job_.fail(what + ": hcomm_improbe found a message of tag 41 after both were taken");
    Inbox last(count + 3);
    job_.check(hcomm_recv(last.data(), count + 3, HCOMM_INT32, prev, 42, comm_, nullptr), what + ": hcomm_recv");
    expect_data(last, prev, 42, 0, count + 3, what + ", tag 42");
    for (hcomm_request_t q : sends) job_.check(hcomm_wait(q), what + ": hcomm_wait of a send");
    job_.summary("matching: " + what + " (probe, iprobe, mprobe, improbe, mrecv, imrecv)");
  }

  // A receive cancelled before its message came leaves it to the next
  // receive; one that matched and a send complete as they would.
  void cancel(size_t count) {
    const int next = (me_ + 1) % n_, prev = (me_ + n_ - 1) % n_;
    const std::string what = "cancel, " + std::to_string(count) + " elements";
    Inbox never(count), cancelled(count), taker(count), matched(count);
    job_.check(hcomm_irecv(never.data(), count, HCOMM_INT32, HCOMM_ANY_SOURCE, 999, comm_, &never.request),
               what + ": hcomm_irecv");
    job_.check(hcomm_irecv(cancelled.data(), count, HCOMM_INT32, prev, 51, comm_, &cancelled.request),
               what + ": hcomm_irecv");
    job_.check(hcomm_irecv(taker.data(), count, HCOMM_INT32, prev, 51, comm_, &taker.request), what + ": hcomm_irecv");
    job_.check(hcomm_cancel(never.request), what + ": hcomm_cancel");
    job_.check(hcomm_cancel(cancelled.request), what + ": hcomm_cancel");
    job_.check(hcomm_wait_status(never.request, &never.status), what + ": hcomm_wait_status of a cancelled receive");
    int done = 0;
    job_.check(hcomm_test_status(cancelled.request, &done, &cancelled.status),
               what + ": hcomm_test_status of a cancelled receive");
    if (!done) {
      job_.fail(what + ": a cancelled receive is not done at once");
      job_.check(hcomm_wait(cancelled.request), what + ": hcomm_wait");
    }
    for (const Inbox* box : {&never, &cancelled})
      if (!box->status.cancelled || box->status.source != HCOMM_ANY_SOURCE || box->check(0, 0, 0, 0, 0) != "")
        job_.fail(what + ": a cancelled receive's status says " + describe(box->status) +
                  " (expected cancelled, no source) or its room was written: " + box->check(0, 0, 0, 0, 0));
    allreduce_check(what);  // only now the messages leave
    std::vector<int32_t> m51 = message(me_, next, 51, 0, count), m52 = message(me_, next, 52, 0, count);
    hcomm_request_t send51 = nullptr, send52 = nullptr;
    job_.check(hcomm_isend(m51.data(), count, HCOMM_INT32, next, 51, comm_, &send51), what + ": hcomm_isend");
    job_.check(hcomm_isend(m52.data(), count, HCOMM_INT32, next, 52, comm_, &send52), what + ": hcomm_isend");
    job_.check(hcomm_cancel(send52), what + ": hcomm_cancel of a send");
    job_.check(hcomm_wait_status(taker.request, &taker.status), what + ": hcomm_wait_status");
    expect(taker, prev, 51, 0, count, what + ": the receive after the cancelled one");
    // Once the message is here, a receive matches it as it is posted.
    int flag = 0;
    while (!flag) job_.check(hcomm_iprobe(prev, 52, comm_, &flag, nullptr), what + ": hcomm_iprobe");
    job_.check(hcomm_irecv(matched.data(), count, HCOMM_INT32, prev, 52, comm_, &matched.request),
               what + ": hcomm_irecv");
    job_.check(hcomm_cancel(matched.request), what + ": hcomm_cancel of a matched receive");
    job_.check(hcomm_wait_status(matched.request, &matched.status), what + ": hcomm_wait_status");
    expect(matched, prev, 52, 0, count, what + ": a matched receive, cancelled");
    job_.check(hcomm_wait(send51), what + ": hcomm_wait of a send");
    job_.check(hcomm_wait(send52), what + ": hcomm_wait of a cancelled send");
    job_.summary("matching: " + what);
  }

  // A message longer than its receive's room fails that receive alone
  // (HCOMM_ERR_TRUNCATED, the room's worth landed, the status telling the
  // message's bytes); the next message is received as usual.
  void truncation(size_t count, bool nonblocking) {
    const int next = (me_ + 1) % n_, prev = (me_ + n_ - 1) % n_;
    const size_t room = count / 2;
    const std::string what = std::string(nonblocking ? "nonblocking " : "") + "truncation of " + std::to_string(count) +
                             " elements to " + std::to_string(room);
    std::vector<int32_t> long_one = message(me_, next, 60, 0, count), after = message(me_, next, 61, 0, count);
    hcomm_request_t sends[2];
    job_.check(hcomm_isend(long_one.data(), count, HCOMM_INT32, next, 60, comm_, &sends[0]), what + ": hcomm_isend");
    job_.check(hcomm_isend(after.data(), count, HCOMM_INT32, next, 61, comm_, &sends[1]), what + ": hcomm_isend");
    Inbox shortened(room);
    hcomm_result_t rc;
    if (nonblocking) {
      job_.check(hcomm_irecv(shortened.data(), room, HCOMM_INT32, prev, 60, comm_, &shortened.request),
                 what + ": hcomm_irecv");
      rc = hcomm_wait_status(shortened.request, &shortened.status);
    } else {
      rc = hcomm_recv_status(shortened.data(), room, HCOMM_INT32, prev, 60, comm_, nullptr, &shortened.status);
    }
    const std::string text = hcomm_get_last_error();
    if (rc != HCOMM_ERR_TRUNCATED || text.find("room") == std::string::npos)
      job_.fail(what + ": the receive returned " + hcomm_result_string(rc) + " (" + text +
                "), expected HCOMM_ERR_TRUNCATED saying so");
    if (shortened.status.source != prev || shortened.status.tag != 60 || shortened.status.bytes != count * 4)
      job_.fail(what + ": the truncated receive's status says " + describe(shortened.status));
    expect_data(shortened, prev, 60, 0, room, what + ", the room's worth");
    Inbox whole(count);
    job_.check(hcomm_recv(whole.data(), count, HCOMM_INT32, prev, 61, comm_, nullptr), what + ": the next hcomm_recv");
    expect_data(whole, prev, 61, 0, count, what + ", the next message");
    for (hcomm_request_t s : sends) job_.check(hcomm_wait(s), what + ": hcomm_wait of a send");
    job_.summary("matching: " + what);
  }

  // hcomm_issend completes once the receiver took its message: rank 0's is
  // not done while rank 1 waits for a go that rank 0 sends only afterwards.
  void synchronous(size_t count) {
    const std::string what = "synchronous send of " + std::to_string(count) + " elements";
    if (n_ >= 2 && me_ <= 1) {
      const int other = 1 - me_;
      int32_t go = 1;
      if (me_ == 0) {
        std::vector<int32_t> m = message(0, 1, 70, 0, count);
        hcomm_request_t send = nullptr;
        job_.check(hcomm_issend(m.data(), count, HCOMM_INT32, 1, 70, comm_, &send), what + ": hcomm_issend");
        int done = 0;
        for (int i = 0; i < 100 && !done; ++i) job_.check(hcomm_test(send, &done), what + ": hcomm_test");
        if (done) job_.fail(what + ": done before the receiver posted its receive");
        job_.check(hcomm_send(&go, 1, HCOMM_INT32, other, 71, comm_, nullptr), what + ": hcomm_send (go)");
        if (!done) job_.check(hcomm_wait(send), what + ": hcomm_wait");
      } else {
        job_.check(hcomm_recv(&go, 1, HCOMM_INT32, other, 71, comm_, nullptr), what + ": hcomm_recv (go)");
        Inbox box(count);
        job_.check(hcomm_recv_status(box.data(), count, HCOMM_INT32, HCOMM_ANY_SOURCE, 70, comm_, nullptr, &box.status),
                   what + ": hcomm_recv_status");
        expect(box, 0, 70, 0, count, what);
      }
    }
    // A synchronous send to itself completes once this rank received it.
    std::vector<int32_t> m = message(me_, me_, 72, 0, count);
    hcomm_request_t send = nullptr;
    job_.check(hcomm_issend(m.data(), count, HCOMM_INT32, me_, 72, comm_, &send), what + ": hcomm_issend to itself");
    int done = 0;
    job_.check(hcomm_test(send, &done), what + ": hcomm_test");
    if (done) job_.fail(what + ": to itself, done before its receive");
    Inbox box(count);
    job_.check(hcomm_recv(box.data(), count, HCOMM_INT32, me_, 72, comm_, nullptr), what + ": hcomm_recv from itself");
    if (!done) job_.check(hcomm_wait(send), what + ": hcomm_wait");
    expect_data(box, me_, 72, 0, count, what + " to itself");
    job_.summary("matching: " + what);
  }

 private:
  static int tag_of(int from, int to, int seq) { return 7 + (from * 3 + seq * 5 + to) % 4; }

  void expect(const Inbox& box, int from, int tag, int seq, size_t count, const std::string& what) {
    if (box.status.source != from || box.status.tag != tag || box.status.bytes != count * 4 || box.status.cancelled)
      job_.fail(what + ": status says " + describe(box.status) + ", expected source " + std::to_string(from) +
                ", tag " + std::to_string(tag) + ", " + std::to_string(count * 4) + " bytes");
    expect_data(box, from, tag, seq, count, what);
  }
  void expect_data(const Inbox& box, int from, int tag, int seq, size_t count, const std::string& what) {
    const std::string problem = box.check(from, me_, tag, seq, count);
    if (!problem.empty()) job_.fail(what + ": " + problem);
  }
  // An allreduce on the same communicator, checked.
  void allreduce_check(const std::string& what) {
    const int64_t mine = me_ + 1;
    int64_t sum = 0;
    job_.check(hcomm_allreduce(&mine, &sum, 1, HCOMM_INT64, HCOMM_SUM, comm_, nullptr), what + ": hcomm_allreduce");
    if (sum != int64_t{n_} * (n_ + 1) / 2)
      job_.fail(what + ": the allreduce beside point to point gave " + std::to_string(sum));
  }

  Job& job_;
  hcomm_comm_t comm_;
  int me_, n_;
};

// Exact mode refuses what needs matching, naming the setting; a split takes
// its parent's mode unless its config sets one.
void modes(Job& job, hcomm_comm_t matching) {
  const int me = job.ranks.rank;
  int32_t x = 0;
  hcomm_status_t s{};
  int flag = 0;
  auto refused = [&](const char* what, hcomm_result_t rc) {
    const std::string text = hcomm_get_last_error();
    if (rc != HCOMM_ERR_INVALID_ARGUMENT || text.find("HCOMM_P2P_MATCHING") == std::string::npos)
      job.fail(std::string(what) + " in exact mode returned " + hcomm_result_string(rc) + " (" + text +
               "), expected an invalid argument naming HCOMM_P2P_MATCHING");
  };
  refused("hcomm_recv from HCOMM_ANY_SOURCE", hcomm_recv(&x, 1, HCOMM_INT32, HCOMM_ANY_SOURCE, 0, job.comm, nullptr));
  refused("hcomm_recv with HCOMM_ANY_TAG", hcomm_recv(&x, 1, HCOMM_INT32, me, HCOMM_ANY_TAG, job.comm, nullptr));
  refused("hcomm_iprobe", hcomm_iprobe(me, 0, job.comm, &flag, &s));
  refused("hcomm_ssend", hcomm_ssend(&x, 1, HCOMM_INT32, me, 0, job.comm, nullptr));
  // A receive of exact mode cannot be withdrawn; a collective's request is no receive.
  hcomm_request_t r = nullptr;
  job.check(hcomm_irecv(&x, 1, HCOMM_INT32, me, 77, job.comm, &r), "hcomm_irecv in exact mode");
  if (hcomm_cancel(r) != HCOMM_ERR_UNSUPPORTED) job.fail("hcomm_cancel of an exact receive did not refuse");
  const int32_t y = 77;
  job.check(hcomm_send(&y, 1, HCOMM_INT32, me, 77, job.comm, nullptr), "hcomm_send to itself in exact mode");
  job.check(hcomm_wait_status(r, &s), "hcomm_wait_status in exact mode");
  if (x != 77 || s.source != me || s.tag != 77 || s.bytes != 4)
    job.fail("an exact receive's status says " + describe(s) + " with element " + std::to_string(x));
  const int64_t one = 1;
  int64_t sum = 0;
  job.check(hcomm_iallreduce(&one, &sum, 1, HCOMM_INT64, HCOMM_SUM, job.comm, &r), "hcomm_iallreduce");
  if (hcomm_cancel(r) != HCOMM_ERR_INVALID_ARGUMENT) job.fail("hcomm_cancel of a collective did not refuse");
  job.check(hcomm_wait(r), "hcomm_wait of the allreduce");

  // A dup of the matching communicator matches too; a split told exact does not.
  hcomm_comm_t dup = nullptr, exact = nullptr;
  job.check(hcomm_comm_dup(matching, &dup), "hcomm_comm_dup of the matching communicator");
  const int32_t out[3] = {1, 2, 3};
  int32_t in[5] = {0, 0, 0, 0, -9};
  job.check(hcomm_send(out, 3, HCOMM_INT32, me, 5, dup, nullptr), "hcomm_send to itself on the dup");
  job.check(hcomm_recv_status(in, 4, HCOMM_INT32, HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, dup, nullptr, &s),
            "hcomm_recv_status from any rank on the dup");
  if (s.source != me || s.tag != 5 || s.bytes != 12 || in[0] != 1 || in[2] != 3 || in[3] != 0 || in[4] != -9)
    job.fail("a dup's wildcard receive got " + describe(s));
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.p2p_matching = HCOMM_P2P_MATCHING_EXACT;
  job.check(hcomm_comm_split(matching, 0, me, &config, &exact), "hcomm_comm_split told exact");
  refused("hcomm_recv from HCOMM_ANY_SOURCE on a split told exact",
          hcomm_recv(&x, 1, HCOMM_INT32, HCOMM_ANY_SOURCE, 0, exact, nullptr));
  config.p2p_matching = 5;
  hcomm_comm_t none = nullptr;
  if (hcomm_comm_split(matching, 0, me, &config, &none) != HCOMM_ERR_INVALID_ARGUMENT || none)
    job.fail("hcomm_comm_split with p2p_matching 5 did not fail");
  job.check(hcomm_comm_destroy(exact), "hcomm_comm_destroy");
  job.check(hcomm_comm_destroy(dup), "hcomm_comm_destroy");
  job.summary("matching: exact mode refuses wildcards, probes and synchronous sends; splits inherit the mode");
}

// A rank that destroys its communicator (on connections of its own) while
// the others go on: a receive from it fails alone with HCOMM_ERR_REMOTE,
// and the others' point to point, wildcards included, goes on.
void gone_peer(Job& job) {
  const int me = job.ranks.rank, n = job.ranks.size, last = n - 1;
  if (n < 2) return;
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.p2p_matching = HCOMM_P2P_MATCHING_ANY;
  config.split_share = HCOMM_SPLIT_SHARE_OFF;
  hcomm_comm_t comm = nullptr;
  job.check(hcomm_comm_split(job.comm, 0, me, &config, &comm), "hcomm_comm_split (connections of its own)");
  int32_t x = me, y = -1;
  hcomm_status_t s{};
  // Every rank's matching is under way: one message to itself.
  job.check(hcomm_send(&x, 1, HCOMM_INT32, me, 1, comm, nullptr), "hcomm_send to itself");
  job.check(hcomm_recv(&y, 1, HCOMM_INT32, HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, comm, nullptr), "hcomm_recv");
  int64_t one = 1, sum = 0;
  job.check(hcomm_allreduce(&one, &sum, 1, HCOMM_INT64, HCOMM_SUM, comm, nullptr), "hcomm_allreduce");
  if (me == last) {
    job.check(hcomm_comm_destroy(comm), "hcomm_comm_destroy ahead of the others");
  } else {
    const hcomm_result_t rc = hcomm_recv_status(&y, 1, HCOMM_INT32, last, HCOMM_ANY_TAG, comm, nullptr, &s);
    const std::string text = hcomm_get_last_error();
    if (rc != HCOMM_ERR_REMOTE || text.find("rank " + std::to_string(last)) == std::string::npos)
      job.fail("a receive from a rank that destroyed its communicator returned " +
               std::string(hcomm_result_string(rc)) + " (" + text + "), expected HCOMM_ERR_REMOTE naming it");
    const int next = (me + 1) % last, prev = (me + last - 1) % last;
    for (int i = 0; i < 10; ++i) {
      x = me * 100 + i;
      hcomm_request_t send = nullptr;
      job.check(hcomm_isend(&x, 1, HCOMM_INT32, next, i, comm, &send), "hcomm_isend after a rank went");
      job.check(hcomm_recv_status(&y, 1, HCOMM_INT32, HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, comm, nullptr, &s),
                "hcomm_recv_status from any rank after a rank went");
      job.check(hcomm_wait(send), "hcomm_wait");
      if (s.source != prev || s.tag != i || y != prev * 100 + i)
        job.fail("after a rank went, receive " + std::to_string(i) + " got " + std::to_string(y) + " with " +
                 describe(s));
    }
    job.check(hcomm_comm_destroy(comm), "hcomm_comm_destroy");
  }
  job.summary("matching: a rank that destroyed its communicator fails receives from it alone");
}

}  // namespace

void test_matching(Job& job, const std::vector<size_t>& counts, size_t large) {
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.p2p_matching = HCOMM_P2P_MATCHING_ANY;
  hcomm_comm_t comm = nullptr;
  job.check(hcomm_comm_split(job.comm, 0, job.ranks.rank, &config, &comm), "hcomm_comm_split into matching mode");
  Matching m(job, comm);
  // Around the envelope's 4 KiB of data: 1024 int32 travel inside it, 1025 after it.
  std::vector<size_t> sizes = counts;
  for (size_t edge : {size_t{1024}, size_t{1025}})
    if (std::find(sizes.begin(), sizes.end(), edge) == sizes.end()) sizes.push_back(edge);
  for (size_t count : sizes) {
    m.wildcards(count, false);
    m.wildcards(count, true);
    m.mixed(count);
    m.probes(count);
    m.cancel(count);
    m.synchronous(count);
    if (count >= 2) {
      m.truncation(count, false);
      m.truncation(count, true);
    }
  }
  if (large) {
    m.wildcards(large, true);
    m.probes(large);
    m.truncation(large, true);
  }
  m.stream();
  modes(job, comm);
  gone_peer(job);
  job.check(hcomm_comm_destroy(comm), "hcomm_comm_destroy of the matching communicator");
}

}  // namespace hcomm::test
