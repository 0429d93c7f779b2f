import urllib.request
API = "https://api.weather.example.com/v1/forecast"
CACHE = "10.0.0.5:8080"
print(urllib.request.urlopen(API).read())
