import CDynamicRuntime
import CMessageThrottle
import DynamicRuntime
import MessageThrottle

// The C API's throttle rules (sf_rule_*) and manual clocks (sf_manual_clock_*). Lives here, not
// in MessageThrottle or DynamicRuntime, because it needs both; libSelectorForwarding.so bundles it.

enum CRules {
    static let rules = CHandleTable<Rule>(kind: "rule")
    static let clocks = CHandleTable<ManualClock>(kind: "manual clock")
    static let tokens = CHandleTable<CooldownToken>(kind: "cooldown token")

    static func mode(_ mode: sf_throttle_mode, _ options: UInt32, className: String, selector: String) throws(RuntimeError) -> ThrottleMode {
        switch mode {
        case SF_THROTTLE_FIRSTLY: return .firstly
        case SF_THROTTLE_LAST: return .last
        case SF_THROTTLE_DEBOUNCE:
            guard options & UInt32(SF_RULE_LEADING) != 0 else { return .debounce }
            return .leadingDebounce(trailing: options & UInt32(SF_RULE_TRAILING) != 0)
        case SF_THROTTLE_SINCE_PERFORMED:
            return .throttleSincePerformed(latest: options & UInt32(SF_RULE_LATEST) != 0)
        case SF_THROTTLE_COOLDOWN: return .cooldown
        case SF_THROTTLE_DELAYED_COOLDOWN: return .delayedCooldown(delay: .zero)
        case SF_THROTTLE_THROTTLE:
            let leading = options & UInt32(SF_RULE_LEADING) != 0, trailing = options & UInt32(SF_RULE_TRAILING) != 0
            guard leading || trailing else {
                throw .invalidArgument(.init(className: className, selector: selector, expected: "SF_RULE_LEADING, SF_RULE_TRAILING or both in the options of SF_THROTTLE_THROTTLE", actual: "neither"))
            }
            return .throttle(leading: leading, trailing: trailing)
        default:
            throw .invalidArgument(.init(className: className, selector: selector, expected: "an sf_throttle_mode", actual: "\(mode.rawValue)"))
        }
    }

    /// An object, a class (its instances) or a metaclass (class methods).
    static func receiver(_ target: sf_id) -> any MessageReceiver {
        if let isa = sf_object_getClass(target), sf_class_isMetaClass(isa) {
            return RuntimeClass.fromC(sf_object_as_class(target))
        }
        return ObjectRef(target)
    }

    static func className(_ target: sf_id?) -> String {
        guard let target, let c = sf_object_getClass(target) else { return "nil" }
        return String(cString: sf_class_getName(c))
    }
}

/// Records `error` for sf_last_error and returns its status.
func record(_ error: RuntimeError) -> sf_status {
    sf_set_last_error(error.code, error.description)
    return error.code
}

func record(_ error: ThrottleError) -> sf_status {
    if case let .runtime(e) = error { return record(e) }
    sf_set_last_error(SF_ERR_RULE, error.description)
    return SF_ERR_RULE
}

func ok() -> sf_status {
    sf_set_last_error(SF_OK, nil)
    return SF_OK
}

func rule(_ handle: sf_rule_t?, _ body: (Rule) throws(RuntimeError) -> sf_status) -> sf_status {
    do {
        return try body(try CRules.rules.lookup(handle))
    } catch {
        return record(error)
    }
}

private func notApplied(_ r: Rule, _ what: String) -> sf_status {
    sf_set_last_error(SF_ERR_RULE, "cannot \(what) the rule for '\(r.selector.name)' on \(r.target): it is not applied")
    return SF_ERR_RULE
}

/// The C function `sf_rule_create` of SelectorForwarding.h.
@_cdecl("sf_rule_create")
public func sf_rule_create_impl(_ target: sf_id?, _ sel: sf_sel?, _ mode: sf_throttle_mode, _ durationNs: UInt64,
                                _ options: UInt32) -> sf_rule_t? {
    let name = CRules.className(target)
    do throws(RuntimeError) {
        guard let target else { throw .nullArgument("a rule target") }
        guard let sel else { throw .nullArgument("a selector", className: name) }
        let s = Selector(raw: sel)
        guard durationNs <= UInt64(Int64.max) else {
            throw .invalidArgument(.init(className: name, selector: s.name, expected: "a duration up to Int64.max ns", actual: "\(durationNs) ns"))
        }
        let known = UInt32(SF_RULE_LEADING) | UInt32(SF_RULE_TRAILING) | UInt32(SF_RULE_RETURN_LAST_RESULT)
            | UInt32(SF_RULE_LATEST)
        guard options & ~known == 0 else {
            throw .invalidArgument(.init(className: name, selector: s.name, expected: "SF_RULE_* option bits", actual: "unknown bits 0x\(String(options & ~known, radix: 16))"))
        }
        let m = try CRules.mode(mode, options, className: name, selector: s.name)
        let r = Rule(target: CRules.receiver(target), selector: s, duration: .nanoseconds(Int64(durationNs)), mode: m)
        if options & UInt32(SF_RULE_RETURN_LAST_RESULT) != 0 { r.suppressedReturn = .lastResult }
        _ = ok()
        return CRules.rules.insert(r)
    } catch {
        _ = record(error)
        return nil
    }
}

/// The C function `sf_rule_setManualClock` of SelectorForwarding.h.
@_cdecl("sf_rule_setManualClock")
public func sf_rule_setManualClock_impl(_ handle: sf_rule_t?, _ clock: sf_manual_clock_t?) -> sf_status {
    rule(handle) { r throws(RuntimeError) in
        let c = try CRules.clocks.lookup(clock)
        guard !r.isApplied else {
            sf_set_last_error(SF_ERR_RULE, "the rule for '\(r.selector.name)' on \(r.target) is applied: set its clock before sf_rule_apply")
            return SF_ERR_RULE
        }
        r.executor = ManualExecutor(clock: c)
        return ok()
    }
}

/// The C function `sf_rule_setRejectedHandler` of SelectorForwarding.h.
@_cdecl("sf_rule_setRejectedHandler")
public func sf_rule_setRejectedHandler_impl(_ handle: sf_rule_t?, _ fn: sf_rule_rejected_fn?, _ context: UnsafeMutableRawPointer?) -> sf_status {
    rule(handle) { r throws(RuntimeError) in
        guard let fn else {
            r.onReject = nil
            return ok()
        }
        let ctx = UInt(bitPattern: context)
        r.onReject = { inv in CInvocations.table.lend(inv) { fn($0, UnsafeMutableRawPointer(bitPattern: ctx)) } }
        return ok()
    }
}

/// The C function `sf_rule_apply` of SelectorForwarding.h.
@_cdecl("sf_rule_apply")
public func sf_rule_apply_impl(_ handle: sf_rule_t?) -> sf_status {
    rule(handle) { r in
        do throws(ThrottleError) {
            try r.apply()
            return ok()
        } catch {
            return record(error)
        }
    }
}

/// The C function `sf_rule_discard` of SelectorForwarding.h.
@_cdecl("sf_rule_discard")
public func sf_rule_discard_impl(_ handle: sf_rule_t?, _ pending: sf_pending_policy) -> sf_status {
    rule(handle) { r throws(RuntimeError) in
        let policy: PendingPolicy
        switch pending {
        case SF_PENDING_CANCEL: policy = .cancel
        case SF_PENDING_FLUSH: policy = .flush
        default: throw .invalidArgument(.init(selector: r.selector.name, expected: "SF_PENDING_CANCEL or SF_PENDING_FLUSH", actual: "pending policy \(pending.rawValue)"))
        }
        return r.discard(pending: policy) ? ok() : notApplied(r, "discard")
    }
}

/// The C function `sf_rule_flush` of SelectorForwarding.h.
@_cdecl("sf_rule_flush")
public func sf_rule_flush_impl(_ handle: sf_rule_t?, _ flushed: UnsafeMutablePointer<Bool>?) -> sf_status {
    flushed?.pointee = false
    return rule(handle) { r in
        guard r.isApplied else { return notApplied(r, "flush") }
        let ran = r.flush()
        flushed?.pointee = ran
        return ok()
    }
}

/// The C function `sf_rule_cancel` of SelectorForwarding.h.
@_cdecl("sf_rule_cancel")
public func sf_rule_cancel_impl(_ handle: sf_rule_t?) -> sf_status {
    rule(handle) { r in
        guard r.isApplied else { return notApplied(r, "cancel") }
        r.cancel()
        return ok()
    }
}

/// The C function `sf_rule_cancelPending` of SelectorForwarding.h.
@_cdecl("sf_rule_cancelPending")
@_spi(CAPI) public func sf_rule_cancelPending_impl(_ handle: sf_rule_t?) -> sf_status {
    rule(handle) { r in
        guard r.isApplied else { return notApplied(r, "cancel the pending call of") }
        r.cancelPending()
        return ok()
    }
}

/// The C function `sf_rule_isPending` of SelectorForwarding.h.
@_cdecl("sf_rule_isPending")
@_spi(CAPI) public func sf_rule_isPending_impl(_ handle: sf_rule_t?) -> Bool {
    (try? CRules.rules.lookup(handle))?.isPending ?? false
}

/// The C function `sf_rule_isApplied` of SelectorForwarding.h.
@_cdecl("sf_rule_isApplied")
public func sf_rule_isApplied_impl(_ handle: sf_rule_t?) -> Bool {
    (try? CRules.rules.lookup(handle))?.isApplied ?? false
}

/// The C function `sf_rule_release` of SelectorForwarding.h.
@_cdecl("sf_rule_release")
public func sf_rule_release_impl(_ handle: sf_rule_t?) -> sf_status {
    do {
        try CRules.rules.release(handle)
        return ok()
    } catch {
        return record(error)
    }
}

/// The C function `sf_manual_clock_create` of SelectorForwarding.h.
@_cdecl("sf_manual_clock_create")
public func sf_manual_clock_create_impl(_ nowNs: UInt64) -> sf_manual_clock_t? {
    guard nowNs <= UInt64(Int64.max) else {
        _ = record(RuntimeError.invalidArgument(.init(expected: "a clock start up to Int64.max ns", actual: "\(nowNs) ns")))
        return nil
    }
    _ = ok()
    return CRules.clocks.insert(ManualClock(now: ThrottleInstant(nanoseconds: Int64(nowNs))))
}

/// The C function `sf_manual_clock_advance` of SelectorForwarding.h.
@_cdecl("sf_manual_clock_advance")
public func sf_manual_clock_advance_impl(_ clock: sf_manual_clock_t?, _ ns: UInt64) -> sf_status {
    do throws(RuntimeError) {
        let c = try CRules.clocks.lookup(clock)
        guard ns <= UInt64(Int64.max - c.now.nanoseconds) else {
            throw RuntimeError.invalidArgument(.init(expected: "an advance that keeps the clock under Int64.max ns", actual: "\(ns) ns"))
        }
        c.advance(by: .nanoseconds(Int64(ns)))
        return ok()
    } catch {
        return record(error)
    }
}

/// The C function `sf_manual_clock_now` of SelectorForwarding.h.
@_cdecl("sf_manual_clock_now")
public func sf_manual_clock_now_impl(_ clock: sf_manual_clock_t?) -> UInt64 {
    do throws(RuntimeError) {
        let c = try CRules.clocks.lookup(clock)
        _ = ok()
        return UInt64(max(c.now.nanoseconds, 0))
    } catch {
        _ = record(error)
        return 0
    }
}

/// The C function `sf_manual_clock_release` of SelectorForwarding.h.
@_cdecl("sf_manual_clock_release")
public func sf_manual_clock_release_impl(_ clock: sf_manual_clock_t?) -> sf_status {
    do {
        try CRules.clocks.release(clock)
        return ok()
    } catch {
        return record(error)
    }
}
