import CDynamicRuntime

// A record kept for reuse by a throttle's captured calls: handed between a hook and a limiter
// as an opaque word, so a spare is exchanged with one atomic operation instead of a lock.
extension Invocation {
    /// Releases what the record holds (target, object arguments, C-string copies, a returned
    /// object, the original it would replay) and zeroes those slots, keeping the record itself
    /// for the next capture. Call only on a record nobody else holds.
    package func emptyForReuse() { storage.emptyForReuse() }

    /// `emptyForReuse()`, then the record as a +1 word for an atomic slot, handing over the
    /// caller's reference (no retain and release around the call); `fromRetainedWord` takes it
    /// back.
    /// The record keeps the original IMP it would have replayed, with the hook's box it came
    /// from, for `HookContext.capture(intoSpare:)` alone (it re-reads the IMP unless that box is
    /// still the published one); `emptyForReuse()` and every other fill drop it.
    package consuming func emptiedRetainedWord() -> UnsafeMutableRawPointer {
        // The reference moves into the word by its bits first, and the record is emptied through
        // it unretained: a retain and release around the emptying cost 40 instructions a call.
        var moved: Invocation? = consume self
        let word = withUnsafeMutableBytes(of: &moved) { bytes in
            let word = bytes.load(as: UnsafeMutableRawPointer.self)
            bytes.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            return word
        }
        ObjectWord<InvocationStorage>(word).withObject { s in
            if !s.emptyByWords(keepingImplementation: true) { s.emptyForReuse() }
        }
        return word
    }

    /// A record handed over by `emptiedRetainedWord()`.
    package static func fromRetainedWord(_ word: UnsafeMutableRawPointer) -> Invocation {
        Invocation(storage: ObjectWord<InvocationStorage>(word).take())
    }
}

extension InvocationStorage {
    /// `Invocation.emptyForReuse()`.
    func emptyForReuse() {
        if emptyByWords() { return }
        clearReturn()
        releaseRetained()
        h.pointee.target = nil
        argumentPointer(0).storeBytes(of: nil, as: sf_id?.self)
        for i in h.pointee.signature.objectArguments { argumentPointer(i).storeBytes(of: nil, as: sf_id?.self) }
        h.pointee.emptied = true
    }
}
