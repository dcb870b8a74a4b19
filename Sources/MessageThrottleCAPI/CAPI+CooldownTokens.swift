import CDynamicRuntime
import CMessageThrottle
import DynamicRuntime
import MessageThrottle

// The C API of delayedCooldown: a rule's delay and shared token, and the tokens (sf_cooldown_token_*).

/// The C function `sf_rule_setDelayedCooldown` of SelectorForwarding.h.
@_cdecl("sf_rule_setDelayedCooldown")
@_spi(CAPI) public func sf_rule_setDelayedCooldown_impl(_ handle: sf_rule_t?, _ delayNs: UInt64,
                                                        _ token: sf_cooldown_token_t?) -> sf_status {
    rule(handle) { r throws(RuntimeError) in
        let shared = try token.map { t throws(RuntimeError) in try CRules.tokens.lookup(t) }
        guard delayNs <= UInt64(Int64.max) else {
            throw .invalidArgument(.init(selector: r.selector.name, expected: "a delay up to Int64.max ns", actual: "\(delayNs) ns"))
        }
        guard case .delayedCooldown = r.mode else {
            sf_set_last_error(SF_ERR_RULE, "the rule for '\(r.selector.name)' on \(r.target) is \(r.mode), not SF_THROTTLE_DELAYED_COOLDOWN: it has no delay or cooldown token")
            return SF_ERR_RULE
        }
        r.mode = .delayedCooldown(delay: .nanoseconds(Int64(delayNs)), token: shared)
        return ok()
    }
}

/// The C function `sf_cooldown_token_create` of SelectorForwarding.h.
@_cdecl("sf_cooldown_token_create")
@_spi(CAPI) public func sf_cooldown_token_create_impl(_ name: UnsafePointer<CChar>?) -> sf_cooldown_token_t? {
    _ = ok()
    return CRules.tokens.insert(name.map { CooldownToken(name: String(cString: $0)) } ?? CooldownToken())
}

/// The C function `sf_cooldown_token_isCooling` of SelectorForwarding.h.
@_cdecl("sf_cooldown_token_isCooling")
@_spi(CAPI) public func sf_cooldown_token_isCooling_impl(_ token: sf_cooldown_token_t?, _ clock: sf_manual_clock_t?) -> Bool {
    do throws(RuntimeError) {
        let t = try CRules.tokens.lookup(token)
        let now = try clock.map { c throws(RuntimeError) in try CRules.clocks.lookup(c).now } ?? MonotonicClock().now
        _ = ok()
        return t.isCooling(at: now)
    } catch {
        _ = record(error)
        return false
    }
}

/// The C function `sf_cooldown_token_reset` of SelectorForwarding.h.
@_cdecl("sf_cooldown_token_reset")
@_spi(CAPI) public func sf_cooldown_token_reset_impl(_ token: sf_cooldown_token_t?) -> sf_status {
    do throws(RuntimeError) {
        try CRules.tokens.lookup(token).reset()
        return ok()
    } catch {
        return record(error)
    }
}

/// The C function `sf_cooldown_token_release` of SelectorForwarding.h.
@_cdecl("sf_cooldown_token_release")
@_spi(CAPI) public func sf_cooldown_token_release_impl(_ token: sf_cooldown_token_t?) -> sf_status {
    do {
        try CRules.tokens.release(token)
        return ok()
    } catch {
        return record(error)
    }
}
