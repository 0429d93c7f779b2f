from playwright.sync_api import sync_playwright
import os

html_file_path = os.path.abspath('path/to/your/file.html')
file_url = f'file://{html_file_path}'

with sync_playwright() as p:
    browser = p.chromium.launch(headless=True)
    page = browser.new_page()
    page.goto(file_url)
    page.screenshot(path='/mnt/user-data/outputs/static_page.png', full_page=True)
    page.fill('#name', 'John Doe')
    page.click('button[type="submit"]')
    browser.close()
