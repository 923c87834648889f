import ChatModel
import Testing

@Suite struct IdentityLocationTests {
    @Test func xdgConfigHomeWhenSetAndAbsoluteElseTheHomesConfig() {
        let none: (String) -> Bool = { _ in false }
        #expect(
            IdentityLocation.resolve(xdgConfigHome: "/x/cfg", home: "/h", fileExists: none) == IdentityLocation(path: "/x/cfg/clawrelay/chat.key")
        )
        #expect(IdentityLocation.resolve(xdgConfigHome: "/x/cfg/", home: "/h", fileExists: none).path == "/x/cfg/clawrelay/chat.key")
        for unset in [nil, "", "relative/cfg"] {
            #expect(
                IdentityLocation.resolve(xdgConfigHome: unset, home: "/h", fileExists: none)
                    == IdentityLocation(path: "/h/.config/clawrelay/chat.key")
            )
        }
        #expect(IdentityLocation.resolve(xdgConfigHome: nil, home: "/", fileExists: none).path == "/.config/clawrelay/chat.key")
    }

    @Test func aKeyAtTheOldDefaultStaysInUseWithANote() {
        let old = "/h/.config/clawrelay/chat.key"
        let found = IdentityLocation.resolve(xdgConfigHome: "/x/cfg", home: "/h") { $0 == old }
        #expect(found.path == old)
        #expect(
            found.note
                == "using this terminal's identity at \(old), where it was kept before XDG_CONFIG_HOME was honoured; "
                + "to keep it in /x/cfg/clawrelay instead: mkdir -p /x/cfg/clawrelay && mv /h/.config/clawrelay/chat.* /x/cfg/clawrelay/"
        )
        let both = IdentityLocation.resolve(xdgConfigHome: "/x/cfg", home: "/h") { _ in true }
        #expect(both == IdentityLocation(path: "/x/cfg/clawrelay/chat.key"), "a key under XDG_CONFIG_HOME wins, silently")
        let same = IdentityLocation.resolve(xdgConfigHome: "/h/.config", home: "/h") { $0 == old }
        #expect(same == IdentityLocation(path: old), "XDG_CONFIG_HOME=~/.config is the same place")
    }
}
