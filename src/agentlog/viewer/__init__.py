"""The offline viewer: a session's log and surface as one self-contained HTML file."""
