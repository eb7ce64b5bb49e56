"""How runs look in a notebook (HTML and Markdown), shared by results, run and notebook."""

__all__: list[str] = []
