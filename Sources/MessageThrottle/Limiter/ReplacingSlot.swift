import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a limiter keeps its held payload while its window only replaces it
/// (`Limiter+Replacing.swift`): the one place a payload travels as its bits.
///
/// The slot's word holds the payload's bits (the low 48), a generation (the 15 bits above)
/// and, at the top, a claim bit; zero when nothing is published. `lastCall` sits in a word of
/// its own, written only by the slot's claimer or before the slot is published. A claim is one
/// compare-and-exchange and is given back with a store; while it lasts, the payload and
/// `lastCall` belong to the claimer alone.
struct ReplacingSlot<Payload>: ~Copyable {
    private let word = Atomic<UInt>(0)
    private let lastCallNanoseconds = Atomic<Int64>(.min)

    /// The payload's bits within the word (user-space addresses on x86-64 and arm64 fit in them).
    private static var payloadBits: UInt { (1 << 48) - 1 }
    /// Set while a sender or an event works on the slot.
    private static var claimBit: UInt { 1 << 63 }

    /// Whether `Payload` is one word whose `nil` is the zero word, so that it can move through
    /// a slot by its bits.
    static func carries() -> Bool {
        guard MemoryLayout<Payload>.size == MemoryLayout<UInt>.size,
              MemoryLayout<Payload?>.size == MemoryLayout<UInt>.size else { return false }
        var none: Payload? = nil
        return withUnsafeBytes(of: &none) { $0.load(as: UInt.self) } == 0
    }

    /// A payload out of its owner's hands, as its bits: owned (released if dropped), and
    /// turned back into the payload only by `unpack()` or by the slot.
    struct Packed: ~Copyable {
        fileprivate let bits: UInt
        fileprivate init(bits: UInt) { self.bits = bits }

        deinit { _ = ReplacingSlot.payload(fromBits: bits) }

        /// The payload, handed back.
        consuming func unpack() -> Payload { ReplacingSlot.payload(fromBits: handOver()) }

        /// The bits, now owning the reference.
        fileprivate consuming func handOver() -> UInt {
            let bits = self.bits
            discard self
            return bits
        }
    }

    /// Takes the payload out of `payload` as its bits when they fit the slot; otherwise leaves
    /// it there and returns nil. No retain or release either way.
    @inline(__always)
    static func pack(_ payload: inout Payload?) -> Packed? {
        withUnsafeMutableBytes(of: &payload) { bytes in
            let bits = bytes.load(as: UInt.self)
            guard bits != 0, bits & ~payloadBits == 0 else { return nil }
            bytes.storeBytes(of: 0, as: UInt.self)
            return Packed(bits: bits)
        }
    }

    /// The payload whose reference `bits` carries, taking that reference over.
    @inline(__always)
    private static func payload(fromBits bits: UInt) -> Payload {
        var p: Payload? = nil
        withUnsafeMutableBytes(of: &p) { $0.storeBytes(of: bits, as: UInt.self) }
        return p.take().unsafelyUnwrapped
    }

    /// The slot's bits of a payload it holds, handing the reference over to them.
    @inline(__always)
    private static func bits(of payload: consuming Payload) -> UInt {
        var p: Payload? = payload
        return withUnsafeMutableBytes(of: &p) { bytes in
            let bits = bytes.load(as: UInt.self)
            bytes.storeBytes(of: 0, as: UInt.self)
            return bits
        }
    }

    /// The slot claimed by this thread: the word as it was before the claim.
    struct Claim: ~Copyable {
        fileprivate let seen: UInt
    }

    /// Whether a payload is published (claimed or not).
    @inline(__always)
    var isPublished: Bool { word.load(ordering: .relaxed) != 0 }

    /// The last call's instant, in nanoseconds: exact while the caller holds a claim, possibly
    /// stale otherwise.
    @inline(__always)
    var lastCall: Int64 { lastCallNanoseconds.load(ordering: .relaxed) }

    /// Claims the published slot; nil when nothing is published. A claim lasts a few dozen
    /// instructions, so a claimed slot is waited for rather than given up on.
    @inline(__always)
    func claim() -> Claim? {
        var seen = word.load(ordering: .relaxed)
        var spins = 0
        while true {
            if seen == 0 { return nil }
            if seen & Self.claimBit != 0 {
                spins += 1
                if spins & 63 == 0 { sched_yield() }
                seen = word.load(ordering: .relaxed)
                continue
            }
            let (exchanged, current) = word.compareExchange(
                expected: seen, desired: seen | Self.claimBit, ordering: .acquiring)
            if exchanged { return Claim(seen: seen) }
            seen = current
        }
    }

    /// Runs `body` on the held payload in place (the claim keeps everyone else out).
    @inline(__always)
    func withHeld<R>(_ claim: borrowing Claim, _ body: (inout Payload) -> R) -> R {
        var held = Self.payload(fromBits: claim.seen & Self.payloadBits)
        let result = body(&held)
        _ = Self.bits(of: consume held)
        return result
    }

    /// Ends a claim, with the held payload as it is, and `lastCall` moved when given.
    @inline(__always)
    func giveBack(_ claim: consuming Claim, lastCall: Int64? = nil) {
        if let lastCall { lastCallNanoseconds.store(lastCall, ordering: .relaxed) }
        word.store(claim.seen, ordering: .releasing)
    }

    /// Ends a claim with `packed` held in place of the payload, which comes back.
    @inline(__always)
    func swap(_ claim: consuming Claim, for packed: consuming Packed, lastCall: Int64) -> Payload {
        let seen = claim.seen
        let bits = packed.handOver()
        lastCallNanoseconds.store(lastCall, ordering: .relaxed)
        word.store((seen & ~Self.payloadBits) | bits, ordering: .releasing)
        return Self.payload(fromBits: seen & Self.payloadBits)
    }

    /// Ends a claim by taking the payload and its last call's instant out: nothing is published.
    @inline(__always)
    func takeBack(_ claim: consuming Claim) -> (payload: Payload, lastCall: Int64) {
        let lastCall = lastCallNanoseconds.load(ordering: .relaxed)
        word.store(0, ordering: .relaxed)
        return (Self.payload(fromBits: claim.seen & Self.payloadBits), lastCall)
    }

    /// Publishes `packed` (nothing must be published) with its last call's instant; the low 15
    /// bits of `generation` tell this publication from the previous one.
    @inline(__always)
    func publish(_ packed: consuming Packed, lastCall: Int64, generation: UInt64) {
        let bits = packed.handOver()
        lastCallNanoseconds.store(lastCall, ordering: .relaxed)
        word.store(UInt(generation & 0x7FFF) << 48 | bits, ordering: .releasing)
    }

    /// The payload published, if any, taken out (nobody else may use the slot any more).
    func drain() -> Payload? {
        let bits = word.exchange(0, ordering: .acquiring)
        return bits == 0 ? nil : Self.payload(fromBits: bits & Self.payloadBits)
    }
}
