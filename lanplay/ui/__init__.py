"""The full-screen terminal client: a plain `TableModel` (model.py) that back ends feed, screens that
read it (screens.py and render_*.py), and the prompt_toolkit application that binds keys to it (app.py).

`LocalTable` (local_table.py) is the in-process back end against bots; the networked runner feeds the
same model through the same methods.
"""
