/// The page's one stylesheet, served as `/static/page.css` (no inline style: the CSP
/// allows only the page's own files). Phone first: one column at 360 px, cards side by
/// side on a wider screen.
enum Stylesheet {
    static let text = """
        :root { color-scheme: light dark; --accent: #2f6fde; --warn: #c0392b; --muted: #777; }
        * { box-sizing: border-box; }
        body { font: 16px/1.4 system-ui, sans-serif; margin: 0; padding: 0 12px 24px; max-width: 1100px; margin-inline: auto; }
        header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px; }
        header h1 { font-size: 1.2rem; margin: 12px 0; }
        nav { display: flex; gap: 12px; align-items: center; }
        nav a { color: var(--accent); text-decoration: none; }
        .cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px; }
        .card { border: 1px solid #8884; border-radius: 10px; padding: 12px; }
        .card h2 { margin: 0 0 4px; font-size: 1.15rem; }
        .state { font-weight: 600; }
        .state.paused, .state.downtime, .state.schedule { color: var(--warn); }
        .state.extended { color: var(--accent); }
        .muted { color: var(--muted); font-size: .9rem; }
        .actions { display: flex; flex-wrap: wrap; gap: 6px; margin: 8px 0; }
        form.inline { display: inline; margin: 0; }
        button { font: inherit; padding: 6px 10px; border-radius: 8px; border: 1px solid #8886; background: #8881; cursor: pointer; }
        button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
        button.danger { color: var(--warn); }
        table { border-collapse: collapse; width: 100%; }
        td, th { text-align: left; padding: 4px 6px; border-bottom: 1px solid #8883; vertical-align: top; overflow-wrap: anywhere; }
        .error { color: var(--warn); }
        .new { color: var(--accent); font-weight: 600; }
        input[type=text], input[type=password], select { font: inherit; padding: 6px; max-width: 100%; }
        svg { width: 100%; height: auto; }
        svg.day rect.q, .key.q::before { fill: #2f6fde55; background: #2f6fde55; }
        svg.day rect.b, .key.b::before { fill: var(--warn); background: var(--warn); }
        svg.day { max-width: 720px; display: block; }
        svg.day text { font-size: 18px; fill: var(--muted); }
        svg.day line.axis { stroke: #8886; }
        .key::before { content: ""; display: inline-block; width: .8em; height: .8em; margin: 0 4px 0 8px; }
        .totals { display: flex; flex-wrap: wrap; gap: 0 32px; }
        .totals h4 { margin: 8px 0 0; }
        form.allow, form.filter { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
        input[type=number] { font: inherit; padding: 6px; width: 5em; }
        @media (max-width: 600px) {
          table.history thead { display: none; }
          table.history tr { display: block; padding: 6px 0; border-bottom: 1px solid #8883; }
          table.history td { display: inline; border: 0; padding: 0 6px 0 0; }
          table.history td.name { display: block; font-weight: 600; }
          table.history td:last-child { display: block; margin-top: 4px; }
          table.devices thead { display: none; }
          table.devices tr { display: block; padding: 8px 0; border-bottom: 1px solid #8883; }
          table.devices td { display: block; border: 0; padding: 2px 0; }
        }
        """
}
