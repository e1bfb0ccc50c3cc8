"""Views for people and code-review tools: a decision as text, Markdown, SARIF and GitHub
Actions output, its findings per file, the evidence summary line, and the report as HTML. A new
output format goes here, registered in the one ``OutputFormat`` to render mapping."""
