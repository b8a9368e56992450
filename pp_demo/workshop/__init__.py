"""What the room needs around the notebooks: the preflight (doctor), JupyterLab (lab), a tiny
tokenizer, and the explorer for a row of one's own.
"""
