/// The page's HTML frame and its small pages. Every value from outside is written through
/// `Escape.html`; the page has no inline script or style (the CSP forbids both).
enum Pages {
    static func document(title: String, body: String, csrf: String? = nil) -> String {
        var nav = ""
        if let csrf {
            nav = """
                <nav><a href="/">Children</a> <a href="/devices">Devices</a> <a href="/summaries">Summaries</a>
                <form method="post" action="/logout" class="inline"><input type="hidden" name="csrf_token" value="\(Escape.html(csrf))"><button>Log out</button></form></nav>
                """
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Escape.html(title)) · phosra-gate</title>
            <link rel="stylesheet" href="/static/page.css">
            </head><body>
            <header><h1>phosra-gate</h1>\(nav)</header>
            <main>
            \(body)
            </main></body></html>
            """
    }

    static func login(message: String?, status: Int = 200) -> WebResponse {
        let note = message.map { "<p class=\"error\">\(Escape.html($0))</p>" } ?? ""
        return .html(
            status,
            document(
                title: "Log in",
                body: """
                    <h2>Log in</h2>\(note)
                    <form method="post" action="/login">
                    <label>Password <input type="password" name="password" autocomplete="current-password" required autofocus></label>
                    <button>Log in</button></form>
                    """))
    }

    static func message(_ status: Int, _ text: String) -> WebResponse {
        .html(
            status,
            document(
                title: "\(status)", body: "<p class=\"error\">\(Escape.html(text))</p><p><a href=\"/\">Back</a></p>"))
    }

    /// A form that posts one action, with the session's CSRF token.
    static func button(
        _ label: String, action: String, csrf: String, fields: [(String, String)] = [], style: String = ""
    ) -> String {
        var hidden = "<input type=\"hidden\" name=\"csrf_token\" value=\"\(Escape.html(csrf))\">"
        for (name, value) in fields {
            hidden += "<input type=\"hidden\" name=\"\(Escape.html(name))\" value=\"\(Escape.html(value))\">"
        }
        let kind = style.isEmpty ? "" : " class=\"\(style)\""
        return
            "<form method=\"post\" action=\"\(Escape.html(action))\" class=\"inline\">\(hidden)<button\(kind)>\(Escape.html(label))</button></form>"
    }
}
