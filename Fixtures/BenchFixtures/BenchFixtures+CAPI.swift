import CDynamicRuntime
import DispatchFixtures
import DynamicRuntime

extension BenchFixtures {
    /// The C API's counterparts of the Swift hook and rule fixtures (cases 4f, 4g, 5c, 8c, 8d),
    /// installed through SelectorForwarding.h as a C program would.
    func installCHooksAndRules() throws {
        let cls = hooked.raw
        guard sf_class_hookMethod(cls, cHookAdd.raw, SF_HOOK_INSTEAD, nil, sfb_hook_proceed, nil) != 0 else {
            throw BenchFixtureError(message: "C hook: " + String(cString: sf_last_error_message()))
        }
        let clock = sf_manual_clock_create(0)
        let hour: UInt64 = 3_600_000_000_000
        let drop = sf_rule_create(sf_class_as_object(cls), cDropAdd.raw, SF_THROTTLE_FIRSTLY, hour, 0)
        let toggle = sf_rule_create(sf_class_as_object(cls), toggleCRuleAdd.raw, SF_THROTTLE_FIRSTLY, hour, 0)
        guard sf_rule_setManualClock(drop, clock) == SF_OK, sf_rule_apply(drop) == SF_OK,
              sf_rule_setManualClock(toggle, clock) == SF_OK else {
            throw BenchFixtureError(message: "C rule: " + String(cString: sf_last_error_message()))
        }
        // The fixtures live for the whole run: the handles are never released.
        toggleCRule = toggle
        guard sfb_loop_rule_toggle(toggle, 1) == 1, sfb_loop_hook_toggle(cls, toggleCHookAdd.raw, 1) == 1 else {
            throw BenchFixtureError(message: "C toggles: " + String(cString: sf_last_error_message()))
        }
    }
}
